// Separate compilation of Asio and Beast: their implementation is compiled once, here, instead of
// in every translation unit that includes them (BOOST_ASIO_SEPARATE_COMPILATION).
#include <boost/asio/impl/src.hpp>
#include <boost/beast/src.hpp>
