/* CPNG: libpng for Swift. Decoding uses the simplified png_image API (errors by return value). Encoding uses the
   full API, because only it sets the zlib level and row filter; libpng reports its errors there by longjmp,
   which Swift cannot catch, so the setjmp lives in photofs_png_encode below. */
#ifndef PHOTOFS_CPNG_SHIM_H
#define PHOTOFS_CPNG_SHIM_H
#include <png.h>
#include <zlib.h> /* Z_HUFFMAN_ONLY, Z_DEFAULT_STRATEGY */
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

/* PNG_IMAGE_SIZE and friends are macros. */
static inline size_t photofs_png_row_stride(const png_image *image) { return PNG_IMAGE_ROW_STRIDE(*image); }
static inline size_t photofs_png_buffer_size(const png_image *image) { return PNG_IMAGE_SIZE(*image); }

struct photofs_png_output {
    unsigned char *data;
    size_t size;
    size_t capacity;
    char message[200];
};

static void photofs_png_error(png_structp png, png_const_charp message) {
    struct photofs_png_output *output = (struct photofs_png_output *)png_get_error_ptr(png);
    strncpy(output->message, message, sizeof output->message - 1);
    output->message[sizeof output->message - 1] = 0;
    png_longjmp(png, 1);
}

static void photofs_png_warning(png_structp png, png_const_charp message) { (void)png; (void)message; }

static void photofs_png_write(png_structp png, png_bytep bytes, png_size_t length) {
    struct photofs_png_output *output = (struct photofs_png_output *)png_get_io_ptr(png);
    if (output->size + length > output->capacity) {
        size_t capacity = output->capacity ? output->capacity : 64 * 1024;
        while (capacity < output->size + length) capacity *= 2;
        unsigned char *grown = (unsigned char *)realloc(output->data, capacity);
        if (grown == NULL) png_error(png, "out of memory");
        output->data = grown;
        output->capacity = capacity;
    }
    memcpy(output->data + output->size, bytes, length);
    output->size += length;
}

static void photofs_png_flush(png_structp png) { (void)png; }

/* Encodes 8-bit pixels (1 gray, 2 gray+alpha, 3 RGB, 4 RGBA) with the given zlib level, zlib's default strategy
   or (huffman_only != 0) Z_HUFFMAN_ONLY, and the SUB filter only.
   On success returns 0 and *out (malloc'd; the caller frees it) holds *out_size bytes. */
static inline int photofs_png_encode(const unsigned char *pixels, int width, int height, int channels,
                                     int zlib_level, int huffman_only, unsigned char **out, size_t *out_size,
                                     char *error, size_t error_size) {
    static const int color_types[] = {PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                                      PNG_COLOR_TYPE_RGB_ALPHA};
    *out = NULL;
    *out_size = 0;
    /* On the heap, so its contents are well defined after the longjmp (locals changed after setjmp are not). */
    struct photofs_png_output *output = (struct photofs_png_output *)calloc(1, sizeof *output);
    if (output == NULL) return -1;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, output, photofs_png_error, photofs_png_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (png == NULL || info == NULL) {
        png_destroy_write_struct(&png, &info);
        free(output);
        return -1;
    }
    if (setjmp(png_jmpbuf(png))) {
        if (error != NULL && error_size > 0) {
            strncpy(error, output->message, error_size - 1);
            error[error_size - 1] = 0;
        }
        png_destroy_write_struct(&png, &info);
        free(output->data);
        free(output);
        return -1;
    }
    png_set_write_fn(png, output, photofs_png_write, photofs_png_flush);
    png_set_compression_level(png, zlib_level);
    png_set_compression_strategy(png, huffman_only ? Z_HUFFMAN_ONLY : Z_DEFAULT_STRATEGY);
    png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_SUB);
    png_set_IHDR(png, info, (png_uint_32)width, (png_uint_32)height, 8, color_types[(channels - 1) & 3],
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    size_t stride = (size_t)width * (size_t)channels;
    for (int y = 0; y < height; y++) png_write_row(png, (png_const_bytep)(pixels + (size_t)y * stride));
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    *out = output->data;
    *out_size = output->size;
    free(output);
    return 0;
}
#endif
