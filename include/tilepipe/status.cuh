#pragma once
//! \file
//! Status: what a host-side call returns, with a message that names the offending argument.

#include <string>
#include <utility>

namespace tilepipe {

class Status {
 public:
  enum class Code {
    kSuccess,
    kInvalidArgument,        //!< an argument is out of range, misaligned or inconsistent
    kUnsupportedDevice,      //!< the GPU is older than sm_80
    kInsufficientResources,  //!< the kernel needs more shared memory than the device has
    kCudaError,              //!< a CUDA runtime call failed
  };

  Status() = default;
  static Status success() { return Status(); }
  static Status error(Code code, std::string message) { return Status(code, std::move(message)); }

  bool ok() const { return code_ == Code::kSuccess; }
  explicit operator bool() const { return ok(); }
  Code code() const { return code_; }
  //! Empty on success; otherwise one sentence naming the argument and what is wrong with it.
  const std::string& message() const { return message_; }
  //! The message as a C string, for `printf("%s", status.what())` ("" on success).
  const char* what() const { return message_.c_str(); }

 private:
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  Code code_ = Code::kSuccess;
  std::string message_;
};

//! Name of a status code, for logs.
inline const char* to_string(Status::Code code) {
  switch (code) {
    case Status::Code::kSuccess: return "success";
    case Status::Code::kInvalidArgument: return "invalid argument";
    case Status::Code::kUnsupportedDevice: return "unsupported device";
    case Status::Code::kInsufficientResources: return "insufficient resources";
    case Status::Code::kCudaError: return "CUDA error";
  }
  return "unknown";
}

}  // namespace tilepipe
