/* CJPEG: libjpeg(-turbo) for Swift. libjpeg reports errors by longjmp, which Swift cannot catch, so every
   call that may fail runs inside one of these C functions, which own the setjmp and return an error string. */
#ifndef PHOTOFS_CJPEG_SHIM_H
#define PHOTOFS_CJPEG_SHIM_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <jpeglib.h>

struct photofs_jpeg_error {
    struct jpeg_error_mgr manager;
    jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
};

static void photofs_jpeg_error_exit(j_common_ptr cinfo) {
    struct photofs_jpeg_error *error = (struct photofs_jpeg_error *)cinfo->err;
    (*cinfo->err->format_message)(cinfo, error->message);
    longjmp(error->jump, 1);
}

/* Silence libjpeg's warnings on stderr (a corrupt-data warning still yields an image; callers decide). */
static void photofs_jpeg_output_message(j_common_ptr cinfo) { (void)cinfo; }

/* Routes libjpeg's errors to photofs_jpeg_error_exit (longjmp back to the caller's setjmp) and silences
   its warnings. The setjmp itself must stay in each calling function: its frame has to be live. */
static inline struct jpeg_error_mgr *photofs_jpeg_errors(struct photofs_jpeg_error *jerr) {
    struct jpeg_error_mgr *manager = jpeg_std_error(&jerr->manager);
    manager->error_exit = photofs_jpeg_error_exit;
    manager->output_message = photofs_jpeg_output_message;
    return manager;
}

static inline void photofs_jpeg_copy_error(const char *message, char *error, size_t error_size) {
    if (error != NULL && error_size > 0) {
        strncpy(error, message, error_size - 1);
        error[error_size - 1] = 0;
    }
}

/* Encodes 8-bit pixels (1 = gray, 3 = RGB components) as a baseline JPEG into a malloc'd buffer the caller frees.
   Returns 0 on success. */
static inline int photofs_jpeg_encode(const unsigned char *pixels, int width, int height, int components,
                                      int quality, unsigned char **out, unsigned long *out_size,
                                      char *error, size_t error_size) {
    struct jpeg_compress_struct cinfo;
    struct photofs_jpeg_error jerr;
    memset(&cinfo, 0, sizeof cinfo);
    *out = NULL;
    *out_size = 0;
    cinfo.err = photofs_jpeg_errors(&jerr);
    if (setjmp(jerr.jump)) {
        photofs_jpeg_copy_error(jerr.message, error, error_size);
        jpeg_destroy_compress(&cinfo);
        free(*out);
        *out = NULL;
        return -1;
    }
    jpeg_create_compress(&cinfo);
    jpeg_mem_dest(&cinfo, out, out_size);
    cinfo.image_width = (JDIMENSION)width;
    cinfo.image_height = (JDIMENSION)height;
    cinfo.input_components = components;
    cinfo.in_color_space = components == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&cinfo);
    jpeg_set_quality(&cinfo, quality, TRUE);
    jpeg_start_compress(&cinfo, TRUE);
    while (cinfo.next_scanline < cinfo.image_height) {
        JSAMPROW row = (JSAMPROW)(pixels + (size_t)cinfo.next_scanline * (size_t)width * (size_t)components);
        jpeg_write_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_compress(&cinfo);
    jpeg_destroy_compress(&cinfo);
    return 0;
}

/* Decodes a JPEG held in memory to 8-bit RGB (gray and CMYK are converted by libjpeg where it can), scaled by
   1/scale_denom in the DCT domain (1, 2, 4 or 8). *pixels is malloc'd; the caller frees it. Returns 0 on success.
   max_pixels (0 = no limit) is checked against the header before any pixel is decoded. */
static inline int photofs_jpeg_decode(const unsigned char *data, unsigned long size, int scale_denom,
                                      unsigned long max_pixels, int *width, int *height,
                                      unsigned char **pixels, char *error, size_t error_size) {
    struct jpeg_decompress_struct cinfo;
    struct photofs_jpeg_error jerr;
    memset(&cinfo, 0, sizeof cinfo);
    *pixels = NULL;
    cinfo.err = photofs_jpeg_errors(&jerr);
    if (setjmp(jerr.jump)) {
        photofs_jpeg_copy_error(jerr.message, error, error_size);
        jpeg_destroy_decompress(&cinfo);
        free(*pixels);
        *pixels = NULL;
        return -1;
    }
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, data, size);
    jpeg_read_header(&cinfo, TRUE);
    if (max_pixels != 0 && (unsigned long)cinfo.image_width * (unsigned long)cinfo.image_height > max_pixels) {
        photofs_jpeg_copy_error("image has more pixels than allowed", error, error_size);
        jpeg_destroy_decompress(&cinfo);
        return -2;
    }
    cinfo.out_color_space = JCS_RGB;
    cinfo.scale_num = 1;
    cinfo.scale_denom = (unsigned int)(scale_denom > 0 ? scale_denom : 1);
    jpeg_start_decompress(&cinfo);
    size_t stride = (size_t)cinfo.output_width * (size_t)cinfo.output_components;
    *pixels = (unsigned char *)malloc(stride * cinfo.output_height);
    if (*pixels == NULL) {
        photofs_jpeg_copy_error("out of memory", error, error_size);
        jpeg_destroy_decompress(&cinfo);
        return -3;
    }
    while (cinfo.output_scanline < cinfo.output_height) {
        JSAMPROW row = *pixels + (size_t)cinfo.output_scanline * stride;
        jpeg_read_scanlines(&cinfo, &row, 1);
    }
    *width = (int)cinfo.output_width;
    *height = (int)cinfo.output_height;
    jpeg_finish_decompress(&cinfo);
    jpeg_destroy_decompress(&cinfo);
    return 0;
}
/* Reads only the header: dimensions, without decoding a pixel (to pick a DCT scale or refuse a bomb). */
static inline int photofs_jpeg_read_size(const unsigned char *data, unsigned long size, int *width, int *height,
                                         char *error, size_t error_size) {
    struct jpeg_decompress_struct cinfo;
    struct photofs_jpeg_error jerr;
    memset(&cinfo, 0, sizeof cinfo);
    cinfo.err = photofs_jpeg_errors(&jerr);
    if (setjmp(jerr.jump)) {
        photofs_jpeg_copy_error(jerr.message, error, error_size);
        jpeg_destroy_decompress(&cinfo);
        return -1;
    }
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, data, size);
    jpeg_read_header(&cinfo, TRUE);
    *width = (int)cinfo.image_width;
    *height = (int)cinfo.image_height;
    jpeg_destroy_decompress(&cinfo);
    return 0;
}
#endif
