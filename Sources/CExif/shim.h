/* CExif: libexif for Swift. libexif's API is plain C (no longjmp); the shim gathers its headers under one module
   and counts what its log says is corrupt (the log's callback is variadic). */
#ifndef PHOTOFS_CEXIF_SHIM_H
#define PHOTOFS_CEXIF_SHIM_H
#include <libexif/exif-data.h>
#include <libexif/exif-entry.h>
#include <libexif/exif-content.h>
#include <libexif/exif-utils.h>
#include <libexif/exif-tag.h>
#include <libexif/exif-ifd.h>

#include <libexif/exif-log.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

/* What libexif's log says of a block that points outside itself: some as corrupt data, others only as debug
   messages ("Tag starts past end of buffer" for a value outside the block, "Short data; only loading 17
   entries" for a count of 65,535, both in libexif 0.6.24). */
static inline void photofs_exif_count_corruption(ExifLog *log, ExifLogCode code, const char *domain,
                                                 const char *format, va_list args, void *counter) {
    (void)log; (void)domain; (void)args;
    if (code == EXIF_LOG_CODE_CORRUPT_DATA
        || (format != NULL && (strstr(format, "past end") != NULL || strstr(format, "Short data") != NULL
                               || strstr(format, "Bogus") != NULL || strstr(format, "recursion") != NULL))) {
        *(unsigned *)counter += 1;
    }
}

/* Loads `size` bytes into `data` and returns how many times libexif found them corrupt (an IFD or a value
   outside the block, too many entries, a loop): what it says only to a log (a variadic callback, which Swift
   cannot be), and the import turns into a warning: the tags it dropped are otherwise lost without a word. */
static inline unsigned photofs_exif_load_counting_corruption(ExifData *data, const unsigned char *bytes,
                                                            unsigned int size) {
    unsigned corrupt = 0;
    ExifLog *log = exif_log_new();
    if (log != NULL) {
        exif_log_set_func(log, photofs_exif_count_corruption, &corrupt);
        exif_data_log(data, log);
    }
    exif_data_load_data(data, bytes, size);
    if (log != NULL) {
        exif_data_log(data, NULL);
        exif_log_unref(log);
    }
    return corrupt;
}

/* The byte order a loaded block was written in, needed to read its SHORT and RATIONAL values. */
static inline ExifByteOrder photofs_exif_byte_order(ExifData *data) { return exif_data_get_byte_order(data); }
#endif
