/* CExif: libexif for Swift. libexif's API is plain C (no longjmp, no variadic calls photofs needs); the shim
   only gathers its headers under one module, and silences its log, which would otherwise print to nobody. */
#ifndef PHOTOFS_CEXIF_SHIM_H
#define PHOTOFS_CEXIF_SHIM_H
#include <libexif/exif-data.h>
#include <libexif/exif-entry.h>
#include <libexif/exif-content.h>
#include <libexif/exif-utils.h>
#include <libexif/exif-tag.h>
#include <libexif/exif-ifd.h>

/* The byte order a loaded block was written in, needed to read its SHORT and RATIONAL values. */
static inline ExifByteOrder photofs_exif_byte_order(ExifData *data) { return exif_data_get_byte_order(data); }
#endif
