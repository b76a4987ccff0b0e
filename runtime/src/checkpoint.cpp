//===- checkpoint.cpp - Sharded checkpoints: write, find, consolidate -----===//
//
// The order of a save makes it atomic for readers that go through
// DIR/latest: the ranks' files and the manifest are written into a hidden
// directory (.<tag>.tmp), which rank 0 renames to <tag> once every rank's
// file is complete and synced; only then does it replace DIR/latest (a
// temporary renamed over it). A crash before that rename leaves the old
// `latest` and its checkpoint as they were; a stale .tmp directory is
// removed by the next save. A tag is never reused, so no complete
// checkpoint is ever overwritten.
//
//===----------------------------------------------------------------------===//

#include "checkpoint.h"

#include "mwrt/checkpoint.h"
#include "mwrt/comm.h"
#include "status.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <memory>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace mwrt;
using namespace mwrt::detail;

namespace {

constexpr const char *kFormat = "memwall-sharded-checkpoint";
constexpr int kVersion = 1;

bool isDirectory(const std::string &path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

bool exists(const std::string &path) {
  return ::access(path.c_str(), F_OK) == 0;
}

std::string errnoText() { return std::strerror(errno); }

bool syncPath(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  bool ok = ::fsync(fd) == 0;
  ::close(fd);
  return ok;
}

/// Writes `text` to `path` through a synced temporary renamed over it.
bool writeFileAtomically(const std::string &path, const std::string &text,
                         std::string &error) {
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    error = tmp + ": cannot create: " + errnoText();
    return false;
  }
  const char *p = text.data();
  size_t left = text.size();
  while (left) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      error = tmp + ": cannot write: " + errnoText();
      ::close(fd);
      ::unlink(tmp.c_str());
      return false;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    error = tmp + ": cannot sync: " + errnoText();
    ::unlink(tmp.c_str());
    return false;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    error = path + ": cannot rename into place: " + errnoText();
    ::unlink(tmp.c_str());
    return false;
  }
  return true;
}

/// Removes a directory of plain files (a stale temporary checkpoint).
void removeFlatDirectory(const std::string &path) {
  if (DIR *d = ::opendir(path.c_str())) {
    while (dirent *e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name != "." && name != "..")
        ::unlink((path + "/" + name).c_str());
    }
    ::closedir(d);
  }
  ::rmdir(path.c_str());
}

bool readText(const std::string &path, std::string &text) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  text = ss.str();
  return true;
}

/// The checkpoint directory `dir` stands for: itself when it holds a
/// manifest, else the one DIR/latest names.
mwrt_status resolveCheckpoint(const std::string &dir, std::string &resolved) {
  if (exists(dir + "/manifest.json")) {
    resolved = dir;
    return MWRT_OK;
  }
  std::string tag;
  if (!readText(dir + "/latest", tag))
    return setError(MWRT_NOT_FOUND,
                    dir + ": not a sharded checkpoint (no 'latest' and no "
                          "manifest.json)");
  while (!tag.empty() && (tag.back() == '\n' || tag.back() == ' '))
    tag.pop_back();
  if (tag.empty() || tag.find('/') != std::string::npos || tag[0] == '.')
    return setError(MWRT_INVALID_ARGUMENT,
                    dir + "/latest: '" + tag + "' is not a checkpoint tag");
  resolved = dir + "/" + tag;
  if (!exists(resolved + "/manifest.json"))
    return setError(MWRT_NOT_FOUND, dir + "/latest names '" + tag +
                                        "', which has no manifest.json");
  return MWRT_OK;
}

struct Manifest {
  int ranks = 0;
  uint64_t step = 0;
  std::vector<std::string> files;
  struct Member {
    std::string source;
    std::vector<int64_t> shape;
    int64_t elements = 0;
  };
  struct Entry {
    std::string name;
    DType dtype = DType::F32;
    std::vector<int64_t> shape;
    std::vector<Member> members;
  };
  std::vector<Entry> tensors;
};

mwrt_status readManifest(const std::string &checkpoint, Manifest &m) {
  std::string path = checkpoint + "/manifest.json", text;
  if (!readText(path, text))
    return setError(MWRT_NOT_FOUND, path + ": cannot read");
  auto bad = [&](const std::string &why) {
    return setError(MWRT_INVALID_ARGUMENT, path + ": " + why);
  };
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return bad("not a JSON object");
  if (j.value("format", "") != kFormat)
    return bad(std::string("not a ") + kFormat + " manifest");
  if (!j.contains("version") || !j["version"].is_number_integer() ||
      j["version"].get<int>() != kVersion)
    return bad("unsupported version (this runtime reads version " +
               std::to_string(kVersion) + ")");
  if (!j.contains("ranks") || !j["ranks"].is_number_unsigned() ||
      j["ranks"].get<uint64_t>() < 1 || j["ranks"].get<uint64_t>() > 1 << 20)
    return bad("'ranks' must be a positive integer");
  m.ranks = j["ranks"].get<int>();
  if (j.contains("step") && j["step"].is_number_unsigned())
    m.step = j["step"].get<uint64_t>();
  if (!j.contains("files") || !j["files"].is_array() ||
      j["files"].size() != static_cast<size_t>(m.ranks))
    return bad("'files' must list one file per rank");
  for (const auto &f : j["files"]) {
    if (!f.is_string())
      return bad("'files' must hold file names");
    std::string name = f.get<std::string>();
    if (name.empty() || name.find('/') != std::string::npos || name[0] == '.')
      return bad("'" + name + "' is not a file name of the checkpoint");
    m.files.push_back(name);
  }
  if (!j.contains("tensors") || !j["tensors"].is_array())
    return bad("'tensors' must be a list");
  auto shapeOf = [](const nlohmann::json &s, std::vector<int64_t> &out) {
    if (!s.is_array())
      return false;
    for (const auto &d : s) {
      if (!d.is_number_unsigned() || d.get<uint64_t>() > (1ull << 40))
        return false;
      out.push_back(d.get<int64_t>());
    }
    return true;
  };
  for (const auto &t : j["tensors"]) {
    Manifest::Entry e;
    if (!t.is_object() || !t.contains("name") || !t["name"].is_string() ||
        !t.contains("dtype") || !t["dtype"].is_string() ||
        !parseDType(t["dtype"].get<std::string>(), e.dtype) ||
        !t.contains("shape") || !shapeOf(t["shape"], e.shape))
      return bad("a tensor needs a name, a dtype and a shape");
    e.name = t["name"].get<std::string>();
    if (t.contains("members")) {
      if (!t["members"].is_array())
        return bad("tensor '" + e.name + "': 'members' must be a list");
      for (const auto &mem : t["members"]) {
        Manifest::Member member;
        if (!mem.is_object() || !mem.contains("source") ||
            !mem["source"].is_string() || !mem.contains("shape") ||
            !shapeOf(mem["shape"], member.shape))
          return bad("tensor '" + e.name +
                     "': a member needs a source and a shape");
        member.source = mem["source"].get<std::string>();
        member.elements = 1;
        for (int64_t d : member.shape)
          member.elements *= d;
        e.members.push_back(std::move(member));
      }
    }
    m.tensors.push_back(std::move(e));
  }
  return MWRT_OK;
}

/// The checkpoint `dir` stands for and its manifest.
mwrt_status openCheckpoint(const std::string &dir, std::string &checkpoint,
                           Manifest &m) {
  if (mwrt_status st = resolveCheckpoint(dir, checkpoint))
    return st;
  return readManifest(checkpoint, m);
}

std::string rankFileName(int rank) {
  return "rank-" + std::to_string(rank) + ".safetensors";
}

} // namespace

mwrt_status detail::writeShardedCheckpoint(const std::string &dir,
                                           const Plan &plan, int rank,
                                           uint64_t step, mwrt_status collected,
                                           const SafeTensors &weights) {
  const int ranks = static_cast<int>(plan.ranks());
  // 1. Rank 0 makes the directory, picks an unused tag and makes the
  //    temporary for it; every rank learns the tag.
  mwrt_status st = collected;
  std::string tag;
  if (rank == 0 && st == MWRT_OK) {
    if (!isDirectory(dir) && ::mkdir(dir.c_str(), 0755) != 0)
      st = setError(MWRT_INVALID_ARGUMENT,
                    "--save-weights " + dir + ": cannot create the checkpoint "
                    "directory: " + errnoText());
    std::string base = "step-" + std::to_string(step);
    tag = base;
    for (int k = 1; st == MWRT_OK && exists(dir + "/" + tag); ++k)
      tag = base + "." + std::to_string(k);
    if (st == MWRT_OK) {
      std::string tmp = dir + "/." + tag + ".tmp";
      removeFlatDirectory(tmp);
      if (::mkdir(tmp.c_str(), 0755) != 0)
        st = setError(MWRT_INVALID_ARGUMENT,
                      tmp + ": cannot create: " + errnoText());
    }
  }
  if ((st = agreeAcrossRanks(st)))
    return st;
  if ((st = broadcastAcrossRanks(tag, 0)))
    return st;
  const std::string tmp = dir + "/." + tag + ".tmp";

  // 2. Every rank writes (and syncs) its own file.
  std::string error;
  st = writeSafeTensors(tmp + "/" + rankFileName(rank), weights, error)
           ? MWRT_OK
           : setError(MWRT_INVALID_ARGUMENT, error);
  if ((st = agreeAcrossRanks(st)))
    return st;

  // 3. Rank 0 writes the manifest, then publishes the directory and
  //    `latest`.
  if (rank == 0) {
    nlohmann::ordered_json j;
    j["format"] = kFormat;
    j["version"] = kVersion;
    j["ranks"] = ranks;
    j["step"] = step;
    j["function"] = plan.function();
    nlohmann::ordered_json files = nlohmann::ordered_json::array();
    for (int r = 0; r < ranks; ++r)
      files.push_back(rankFileName(r));
    j["files"] = files;
    nlohmann::ordered_json tensors = nlohmann::ordered_json::array();
    for (const std::string &name : weights.names()) {
      int p = plan.findPersistent(name);
      const TensorData *t = weights.find(name);
      nlohmann::ordered_json e;
      e["name"] = name;
      e["dtype"] = dtypeName(t->dtype);
      e["shape"] = t->shape;
      if (p >= 0 && !plan.persistents()[p].shard.empty()) {
        nlohmann::ordered_json members = nlohmann::ordered_json::array();
        for (const ShardMemberDesc &m : plan.persistents()[p].shard)
          members.push_back({{"source", m.source}, {"shape", m.shape}});
        e["members"] = members;
      }
      tensors.push_back(e);
    }
    j["tensors"] = tensors;
    if (!writeFileAtomically(tmp + "/manifest.json", j.dump(1) + "\n", error))
      st = setError(MWRT_INVALID_ARGUMENT, error);
    else if (!syncPath(tmp) ||
             ::rename(tmp.c_str(), (dir + "/" + tag).c_str()) != 0)
      st = setError(MWRT_INVALID_ARGUMENT, dir + "/" + tag +
                                               ": cannot publish: " +
                                               errnoText());
    else if (!syncPath(dir) ||
             !writeFileAtomically(dir + "/latest", tag + "\n", error))
      st = setError(MWRT_INVALID_ARGUMENT,
                    error.empty() ? dir + ": cannot sync" : error);
    else
      syncPath(dir);
  }
  return agreeAcrossRanks(st);
}

mwrt_status detail::findShardedCheckpoint(const std::string &dir,
                                          uint32_t ranks, int rank,
                                          std::string &rankFile,
                                          uint64_t &step) {
  std::string checkpoint;
  Manifest m;
  if (mwrt_status st = openCheckpoint(dir, checkpoint, m))
    return st;
  if (static_cast<uint32_t>(m.ranks) != ranks)
    return setError(MWRT_INVALID_ARGUMENT,
                    checkpoint + ": a checkpoint of " +
                        std::to_string(m.ranks) + " rank" +
                        (m.ranks == 1 ? "" : "s") + ", but the plan runs on " +
                        std::to_string(ranks) +
                        "; merge it with mw-run --consolidate " + dir +
                        " -o FULL.safetensors and load that file");
  rankFile = checkpoint + "/" + m.files[rank];
  step = m.step;
  return MWRT_OK;
}

mwrt_status mwrt::consolidateCheckpoint(const std::string &dir,
                                        const std::string &output,
                                        ConsolidateResult &result) {
  std::string checkpoint;
  Manifest m;
  if (mwrt_status st = openCheckpoint(dir, checkpoint, m))
    return st;
  std::vector<std::unique_ptr<SafeTensorsFile>> files;
  std::string error;
  for (const std::string &name : m.files) {
    files.push_back(std::make_unique<SafeTensorsFile>());
    if (!files.back()->open(checkpoint + "/" + name, error))
      return setError(MWRT_INVALID_ARGUMENT, error);
  }
  ConsolidateResult r;
  r.ranks = m.ranks;
  r.step = m.step;
  SafeTensors out;
  for (const Manifest::Entry &e : m.tensors) {
    const size_t esz = dtypeSize(e.dtype);
    int64_t count = 1;
    for (int64_t d : e.shape)
      count *= d;
    const uint64_t bytes = static_cast<uint64_t>(count) * esz;
    for (size_t f = 0; f < files.size(); ++f) {
      const SafeTensorsFile::Tensor *t = files[f]->find(e.name);
      if (!t || t->dtype != e.dtype || t->shape != e.shape)
        return setError(MWRT_INVALID_ARGUMENT,
                        files[f]->path() + ": tensor '" + e.name +
                            "' is missing or not as the manifest says");
    }
    if (e.members.empty()) {
      TensorData t;
      t.dtype = e.dtype;
      t.shape = e.shape;
      t.bytes.resize(bytes);
      if (!files[0]->read(e.name, 0, t.bytes.data(), bytes, error))
        return setError(MWRT_INVALID_ARGUMENT, error);
      std::vector<uint8_t> other(bytes);
      for (size_t f = 1; f < files.size(); ++f) {
        if (!files[f]->read(e.name, 0, other.data(), bytes, error))
          return setError(MWRT_INVALID_ARGUMENT, error);
        if (other != t.bytes) {
          r.warnings.push_back("'" + e.name + "' differs between rank 0 and "
                               "rank " + std::to_string(f) +
                               "; rank 0's is written");
          break;
        }
      }
      if (!out.add(e.name, std::move(t), error))
        return setError(MWRT_INVALID_ARGUMENT, error);
      ++r.tensors;
      r.bytes += bytes;
      continue;
    }
    // The pieces in rank order are the members flattened, then padding.
    std::vector<uint8_t> all(bytes * files.size());
    for (size_t f = 0; f < files.size(); ++f)
      if (!files[f]->read(e.name, 0, all.data() + f * bytes, bytes, error))
        return setError(MWRT_INVALID_ARGUMENT, error);
    uint64_t at = 0;
    for (const Manifest::Member &mem : e.members) {
      uint64_t size = static_cast<uint64_t>(mem.elements) * esz;
      if (at + size > all.size())
        return setError(MWRT_INVALID_ARGUMENT,
                        checkpoint + ": the members of '" + e.name +
                            "' hold more elements than its pieces");
      TensorData t;
      t.dtype = e.dtype;
      t.shape = mem.shape;
      t.bytes.assign(all.begin() + at, all.begin() + at + size);
      at += size;
      if (!out.add(mem.source, std::move(t), error))
        return setError(MWRT_INVALID_ARGUMENT, checkpoint + ": " + error);
      ++r.tensors;
      r.bytes += size;
    }
  }
  out.metadata()["memwall.consolidated_from"] = checkpoint;
  out.metadata()["memwall.step"] = std::to_string(m.step);
  if (!writeSafeTensors(output, out, error))
    return setError(MWRT_INVALID_ARGUMENT, error);
  result = std::move(r);
  return MWRT_OK;
}
