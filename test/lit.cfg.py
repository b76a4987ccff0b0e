# lit configuration of Memwall's regression tests.
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "Memwall"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.memwall_obj_root, "test")
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "unit", "fuzz"]

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [config.memwall_tools_dir, config.llvm_tools_dir]
tools = [
    "mw-opt",
    "mw-models",
    "mw-eval",
    "mw-pack",
    "mw-translate",
    "mw-run",
    # Stock mlir-opt from Debian's mlir-19-tools, for the plugin tests.
    ToolSubst("%mlir_opt", os.path.join(config.llvm_tools_dir, "mlir-opt")),
    # The JIT runner and its support libraries, for end-to-end tests.
    ToolSubst("%mlir_cpu_runner",
              os.path.join(config.llvm_tools_dir, "mlir-cpu-runner")),
]
llvm_config.add_tool_substitutions(tools, tool_dirs)
config.substitutions.append(
    ("%mw_plugin", os.path.join(config.memwall_lib_dir, "MemwallPlugin.so")))
config.substitutions.append(("%mw_src", config.memwall_src_root))
config.substitutions.append(("%mw_bin", config.memwall_tools_dir))

# Multi-rank runs (test/Runtime/multi-rank): mw-run built with MPI and an
# mpirun to start the ranks, as CI starts them (as root, more ranks than
# cores).
import shutil
if getattr(config, "mwrt_have_mpi", False) and shutil.which("mpirun"):
    config.available_features.add("mpi")
config.substitutions.append(
    ("%mpirun", "mpirun --allow-run-as-root --oversubscribe"))
# mw-run's CPU matmul is OpenBLAS's (test/Runtime/blas-core.mlir), on an
# x86-64 machine (OpenBLAS's kernel sets there are named after x86 cores).
import platform
if getattr(config, "mwrt_have_openblas", False):
    config.available_features.add("openblas")
if platform.machine() in ("x86_64", "AMD64"):
    config.available_features.add("x86_64")
# A CUDA device this build can use (the NCCL tests): none in CI.
if getattr(config, "mwrt_have_nccl", False) and os.path.exists("/dev/nvidia0"):
    config.available_features.add("cuda-device")
# A CUDA driver (libcuda) is installed: mw-run --device cuda gets past it.
import ctypes.util
if ctypes.util.find_library("cuda"):
    config.available_features.add("cuda-driver")
llvm_lib_dir = os.path.join(os.path.dirname(config.llvm_tools_dir), "lib")
config.substitutions.append(
    ("%mlir_c_runner_utils",
     os.path.join(llvm_lib_dir, "libmlir_c_runner_utils.so")))
config.substitutions.append(
    ("%mlir_runner_utils", os.path.join(llvm_lib_dir, "libmlir_runner_utils.so")))

# The importer (python/memwall) from the venv scripts/setup makes: tests that
# need it say `REQUIRES: importer`.
mw_venv = os.path.join(config.memwall_obj_root, "venv")
if os.path.exists(os.path.join(mw_venv, "bin", "mw-import")):
    config.available_features.add("importer")
config.substitutions.append(("%mw_import", os.path.join(mw_venv, "bin", "mw-import")))
config.substitutions.append(("%mw_python", os.path.join(mw_venv, "bin", "python")))

# A real headless browser for the page of --mw-memory-report=format=html
# (Debian's chromium, which scripts/setup installs): tests that load it say
# `REQUIRES: chromium` and pass `--user-data-dir=%t.profile` (a profile per
# test, so that parallel tests do not share its lock). --no-sandbox because
# CI runs as root.
mw_chromium = shutil.which("chromium") or shutil.which("chromium-browser")
if mw_chromium:
    config.available_features.add("chromium")
else:
    lit_config.note("no chromium on PATH: the browser tests of the memory "
                    "report's html page are skipped (scripts/setup installs "
                    "it)")
config.substitutions.append(
    ("%chromium",
     "%s --headless --no-sandbox --disable-gpu --no-first-run "
     "--disable-extensions --disable-background-networking"
     % (mw_chromium or "chromium")))
