/* CPNG: libpng for Swift. Whole-image decoding uses the simplified png_image API (errors by return value).
   Encoding and row-by-row decoding use the full API, because only it sets the zlib level and row filter and
   hands out rows; libpng reports its errors there by longjmp, which Swift cannot catch, so each function below
   that calls into it holds its own setjmp. */
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

#define PHOTOFS_PNG_MESSAGE 200

struct photofs_png_output {
    unsigned char *data;
    size_t size;
    size_t capacity;
    char message[PHOTOFS_PNG_MESSAGE];
};

/* libpng's error handler for both the writer and the row reader: their error pointer is the message buffer
   (PHOTOFS_PNG_MESSAGE bytes) of their state, filled before jumping back to the setjmp of the call. */
static void photofs_png_error(png_structp png, png_const_charp message) {
    char *buffer = (char *)png_get_error_ptr(png);
    strncpy(buffer, message, PHOTOFS_PNG_MESSAGE - 1);
    buffer[PHOTOFS_PNG_MESSAGE - 1] = 0;
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
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, output->message, photofs_png_error, photofs_png_warning);
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

/* Row-by-row decoding of PNG bytes in memory, for decoders that never hold the whole image. */
struct photofs_png_rows {
    png_structp png;
    png_infop info;
    const unsigned char *data;
    size_t size;
    size_t offset;
    char message[PHOTOFS_PNG_MESSAGE];
};

static void photofs_png_rows_input(png_structp png, png_bytep bytes, png_size_t length) {
    struct photofs_png_rows *rows = (struct photofs_png_rows *)png_get_io_ptr(png);
    if (length > rows->size - rows->offset) png_error(png, "PNG ends early");
    memcpy(bytes, rows->data + rows->offset, length);
    rows->offset += length;
}

/* Reads the header of the PNG in data[0..<size] (which must stay valid until photofs_png_rows_close) and sets
   up 8-bit output: palettes and gray below 8 bits expanded, tRNS made an alpha channel. Returns 0 with
   *width, *height and *channels (1 gray, 2 gray+alpha, 3 RGB, 4 RGBA) set; 1, with the same three set, when
   the file is one only the whole-image decoder handles the same way (interlaced, 16-bit, or a gAMA other than
   sRGB's, which the simplified API converts); -1 on error (rows->message). Call photofs_png_rows_close in
   every case. */
static inline int photofs_png_rows_open(struct photofs_png_rows *rows, const unsigned char *data, size_t size,
                                        png_uint_32 *width, png_uint_32 *height, int *channels) {
    memset(rows, 0, sizeof *rows);
    rows->data = data;
    rows->size = size;
    rows->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, rows->message, photofs_png_error, photofs_png_warning);
    rows->info = rows->png != NULL ? png_create_info_struct(rows->png) : NULL;
    if (rows->info == NULL) {
        strncpy(rows->message, "out of memory", sizeof rows->message - 1);
        return -1;
    }
    if (setjmp(png_jmpbuf(rows->png))) return -1;
    png_set_read_fn(rows->png, rows, photofs_png_rows_input);
    png_read_info(rows->png, rows->info);
    int depth = png_get_bit_depth(rows->png, rows->info);
    int colour = png_get_color_type(rows->png, rows->info);
    int transparent = png_get_valid(rows->png, rows->info, PNG_INFO_tRNS) != 0;
    int wanted = ((colour & PNG_COLOR_MASK_COLOR) ? 3 : 1) + (((colour & PNG_COLOR_MASK_ALPHA) || transparent) ? 1 : 0);
    *width = png_get_image_width(rows->png, rows->info);
    *height = png_get_image_height(rows->png, rows->info);
    *channels = wanted;
    if (png_get_interlace_type(rows->png, rows->info) != PNG_INTERLACE_NONE || depth > 8) return 1;
    png_fixed_point gamma = 0;
    /* libpng leaves samples alone when the file's gamma is within 5 % of the output's (PNG_GAMMA_THRESHOLD_FIXED);
       this takes only gammas within 1 % of sRGB's 1/2.2 (45455), tested against the simplified API in
       PNGShrinkOnLoadTests. To check again when libpng changes how the simplified API treats colour (cICP). */
    if (png_get_gAMA_fixed(rows->png, rows->info, &gamma) != 0 && !png_get_valid(rows->png, rows->info, PNG_INFO_sRGB)
        && (gamma < 45000 || gamma > 45910)) return 1;
    if (colour == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(rows->png);
    if (colour == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(rows->png);
    if (transparent) png_set_tRNS_to_alpha(rows->png);
    png_read_update_info(rows->png, rows->info);
    *channels = png_get_channels(rows->png, rows->info);
    if (*channels != wanted || png_get_bit_depth(rows->png, rows->info) != 8
        || png_get_rowbytes(rows->png, rows->info) != (size_t)*width * (size_t)*channels) return 1;
    return 0;
}

/* Decodes the next `count` rows into buffer (rows `stride` bytes apart). 0, or -1 on error (rows->message). */
static inline int photofs_png_rows_read(struct photofs_png_rows *rows, unsigned char *buffer, size_t stride, int count) {
    if (setjmp(png_jmpbuf(rows->png))) return -1;
    for (int row = 0; row < count; row++) png_read_row(rows->png, buffer + (size_t)row * stride, NULL);
    return 0;
}

/* No setjmp needed: png_destroy_read_struct only frees (libpng 1.6 never calls png_error from it). */
static inline void photofs_png_rows_close(struct photofs_png_rows *rows) {
    if (rows->png != NULL) png_destroy_read_struct(&rows->png, rows->info != NULL ? &rows->info : NULL, NULL);
    rows->png = NULL;
    rows->info = NULL;
}
#endif
