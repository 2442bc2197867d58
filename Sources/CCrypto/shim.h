/* CCrypto: Debian's OpenSSL libcrypto for Swift, one-shot HMAC() and EVP_Digest() only: HMAC-SHA1 for OAuth 1.0a
   signatures and MD5 for freedesktop thumbnail names. Swift calls both directly; this header only gathers them. */
#ifndef PHOTOFS_CCRYPTO_SHIM_H
#define PHOTOFS_CCRYPTO_SHIM_H
#include <openssl/evp.h>
#include <openssl/hmac.h>

#endif
