#pragma once
// IBFAB_SANITIZED is defined when the file that includes this is compiled
// with AddressSanitizer or ThreadSanitizer (IBFAB_SANITIZE): tests whose
// verdict is a wall-clock or resident-size bound leave that bound out then
// (docs/ARCHITECTURE.md, "Sanitizers").
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define IBFAB_SANITIZED 1
#endif
#endif
#if !defined(IBFAB_SANITIZED) && (defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__))
#define IBFAB_SANITIZED 1
#endif
