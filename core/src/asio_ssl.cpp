// Asio's SSL implementation, compiled once (BOOST_ASIO_SEPARATE_COMPILATION, as asio.cpp does for
// the rest of Asio): only what links faultline::asio_ssl needs OpenSSL.
#include <boost/asio/ssl/impl/src.hpp>
