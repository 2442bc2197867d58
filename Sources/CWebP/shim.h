/* CWebP: libwebp for Swift (Immich's 250 px thumbnails are WebP). The simple encode and decode calls take
   and return plain buffers, which Swift calls directly; WebPFree releases what they allocate. */
#ifndef PHOTOFS_CWEBP_SHIM_H
#define PHOTOFS_CWEBP_SHIM_H
#include <webp/decode.h>
#include <webp/encode.h>
#endif
