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
# A CUDA device this build can use (the NCCL tests): none in CI.
if getattr(config, "mwrt_have_nccl", False) and os.path.exists("/dev/nvidia0"):
    config.available_features.add("cuda-device")
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

# The fusion pass (--mw-fuse, issue 16), for the end-to-end fused-plan tests
# (test/Runtime/fusion-models.mlir): `REQUIRES: mw-fuse`.
import subprocess
try:
    help_text = subprocess.run(
        [os.path.join(config.memwall_tools_dir, "mw-opt"), "--help"],
        capture_output=True, text=True, timeout=60).stdout
    if "--mw-fuse " in help_text or "--mw-fuse\n" in help_text:
        config.available_features.add("mw-fuse")
except (OSError, subprocess.SubprocessError):
    pass
