// Private to tls: OpenSSL's error queue turned into an exception.
#pragma once

#include <openssl/err.h>

#include <stdexcept>
#include <string>

namespace faultline::tls {

// Throws std::runtime_error("<what>: <OpenSSL's most recent reason>") and clears the queue.
[[noreturn]] inline void throw_openssl_error(const std::string& what) {
    const unsigned long code = ERR_peek_last_error();
    std::string reason = code ? ERR_reason_error_string(code) ? ERR_reason_error_string(code) : "unknown reason"
                              : "no reason given";
    ERR_clear_error();
    throw std::runtime_error(what + ": " + reason);
}

}  // namespace faultline::tls
