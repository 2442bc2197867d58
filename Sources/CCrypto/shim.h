/* CCrypto: Debian's OpenSSL libcrypto for Swift, HMAC() and the EVP digests: HMAC-SHA1 for OAuth 1.0a
   signatures, MD5 for freedesktop thumbnail names, SHA-1 and SHA-256 digests (Immich checksums, folder file
   hashes). Swift calls them directly; this header only gathers them. */
#ifndef PHOTOFS_CCRYPTO_SHIM_H
#define PHOTOFS_CCRYPTO_SHIM_H
#include <openssl/evp.h>
#include <openssl/hmac.h>

#endif
