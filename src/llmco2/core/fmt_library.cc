// core/fmt_library.cc - {fmt}'s compiled part, built here from Debian's libfmt-dev headers so that llmco2 links {fmt}
// statically (Debian ships only libfmt.so, which would pull libstdc++.so into every process at start-up, and the
// header-only mode would compile format-inl.h into each of our ~250 translation units: +2.8 s each).
//
// format-inl.h defines {fmt}'s non-template functions; the four instantiations below are the ones format.h declares
// `extern template` outside header-only mode (see the block under `#ifndef FMT_HEADER_ONLY` there).
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {
template auto thousands_sep_impl<char>(locale_ref) -> thousands_sep_result<char>;
template auto thousands_sep_impl<wchar_t>(locale_ref) -> thousands_sep_result<wchar_t>;
template auto decimal_point_impl(locale_ref) -> char;
template auto decimal_point_impl(locale_ref) -> wchar_t;
}  // namespace detail
FMT_END_NAMESPACE
