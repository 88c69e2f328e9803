// Part of kvlog's build of classic-level's binding (binding.cc; MIT, LICENSE-classic-level).

// kvlog: LevelDB's write-ahead log in preallocated space, as etcd preallocates its WAL segments.
//
// LevelDB appends each write group to its log file (NNNNNN.log) and, for a synced write, calls
// fdatasync. Appending grows the file, and a file whose size changed makes fdatasync commit the
// filesystem's journal as well as write the data. When the bytes land inside space allocated ahead
// (fallocate, mode 0, which also sets the size), fdatasync writes the data alone: measured on ext4 here,
// 170-176 µs against 246-281 µs per 300-byte synced append (median of 3,000).
//
// The log is allocated `chunk` bytes at a time, ahead of what is written, and cut back to what was
// written when LevelDB closes it. After a crash the file ends in zeros; LevelDB's log reader skips a
// zero header and the rest of its block (log_reader.cc: "produced by ... code that preallocates file
// regions"), so recovery reads the same records as from an appended file. Only one group is ever written
// without a sync before the next one starts when every write is synced, so no later group can outlive
// an earlier one. Other files (tables, the MANIFEST, the info LOG) use LevelDB's own Env unchanged.
// Linux only (fallocate); elsewhere the option is accepted and the log is appended.
#ifndef KVLOG_WAL_PREALLOCATION_H
#define KVLOG_WAL_PREALLOCATION_H

#include <leveldb/env.h>
#include <leveldb/status.h>

#if defined(__linux__)

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <string>

namespace kvlog {

class PreallocatedLogFile final : public leveldb::WritableFile {
 public:
  PreallocatedLogFile(const std::string& name, int fd, uint64_t chunk)
      : name_(name), fd_(fd), chunk_(chunk) {}

  ~PreallocatedLogFile() override {
    if (fd_ >= 0) Close();
  }

  leveldb::Status Append(const leveldb::Slice& data) override {
    buffer_.append(data.data(), data.size());
    // LevelDB flushes after every record; this bounds what one huge record keeps in memory.
    if (buffer_.size() >= kBufferLimit) return FlushBuffer();
    return leveldb::Status::OK();
  }

  leveldb::Status Flush() override { return FlushBuffer(); }

  leveldb::Status Sync() override {
    leveldb::Status s = FlushBuffer();
    if (s.ok() && fdatasync(fd_) != 0) s = Error(errno);
    return s;
  }

  leveldb::Status Close() override {
    if (fd_ < 0) return leveldb::Status::OK();
    leveldb::Status s = FlushBuffer();
    // The allocated tail goes: a clean file holds exactly the records written.
    if (allocated_ > written_ && ftruncate(fd_, static_cast<off_t>(written_)) != 0 && s.ok()) s = Error(errno);
    if (close(fd_) != 0 && s.ok()) s = Error(errno);
    fd_ = -1;
    return s;
  }

 private:
  static constexpr size_t kBufferLimit = 64 * 1024;

  leveldb::Status Error(int err) const { return leveldb::Status::IOError(name_, strerror(err)); }

  /** Allocates whole chunks until `end` bytes fit; a filesystem without fallocate just appends. */
  void Reserve(uint64_t end) {
    while (preallocating_ && allocated_ < end) {
      int rc;
      do {
        rc = fallocate(fd_, 0, static_cast<off_t>(allocated_), static_cast<off_t>(chunk_));
      } while (rc != 0 && errno == EINTR);
      if (rc != 0) {
        preallocating_ = false;
        return;
      }
      allocated_ += chunk_;
    }
  }

  leveldb::Status FlushBuffer() {
    if (buffer_.empty()) return leveldb::Status::OK();
    Reserve(written_ + buffer_.size());
    const char* p = buffer_.data();
    size_t left = buffer_.size();
    while (left > 0) {
      ssize_t n = pwrite(fd_, p, left, static_cast<off_t>(written_));
      if (n < 0) {
        if (errno == EINTR) continue;
        // What was written stays written: a retry must not write it again at the new end.
        const int err = errno;
        buffer_.erase(0, buffer_.size() - left);
        return Error(err);
      }
      p += n;
      left -= static_cast<size_t>(n);
      written_ += static_cast<uint64_t>(n);
    }
    buffer_.clear();
    return leveldb::Status::OK();
  }

  std::string name_;
  int fd_;
  uint64_t chunk_;
  uint64_t written_ = 0;
  uint64_t allocated_ = 0;
  bool preallocating_ = true;
  std::string buffer_;
};

class PreallocatingEnv final : public leveldb::EnvWrapper {
 public:
  PreallocatingEnv(leveldb::Env* base, uint64_t chunk) : leveldb::EnvWrapper(base), chunk_(chunk) {}

  leveldb::Status NewWritableFile(const std::string& name, leveldb::WritableFile** result) override {
    if (!IsLogFile(name)) return target()->NewWritableFile(name, result);
    int fd = open(name.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
      *result = nullptr;
      return leveldb::Status::IOError(name, strerror(errno));
    }
    *result = new PreallocatedLogFile(name, fd, chunk_);
    return leveldb::Status::OK();
  }

 private:
  /** NNNNNN.log: the write-ahead log (the info log is "LOG", the MANIFEST has no suffix). */
  static bool IsLogFile(const std::string& name) {
    static const std::string suffix = ".log";
    return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  }

  uint64_t chunk_;
};

/**
 * The Env for databases whose log is preallocated `chunk` bytes at a time (0: LevelDB's own). One per
 * chunk size for the life of the process: a database handle shared between threads outlives the open
 * that made it, so the Env must too.
 */
inline leveldb::Env* EnvWithPreallocatedLog(uint64_t chunk) {
  if (chunk == 0) return leveldb::Env::Default();
  static std::mutex mutex;
  static std::map<uint64_t, PreallocatingEnv*> envs;
  std::lock_guard<std::mutex> lock(mutex);
  PreallocatingEnv*& env = envs[chunk];
  if (env == nullptr) env = new PreallocatingEnv(leveldb::Env::Default(), chunk);
  return env;
}

}  // namespace kvlog

#else

namespace kvlog {

// fallocate is Linux's: elsewhere the log is appended as LevelDB does.
inline leveldb::Env* EnvWithPreallocatedLog(uint64_t) { return leveldb::Env::Default(); }

}  // namespace kvlog

#endif  // __linux__

#endif
