/* CPNG: libpng for Swift. The simplified png_image API reports errors by return value, so no setjmp is needed here. */
#ifndef PHOTOFS_CPNG_SHIM_H
#define PHOTOFS_CPNG_SHIM_H
#include <png.h>

/* PNG_IMAGE_SIZE and friends are macros. */
static inline size_t photofs_png_row_stride(const png_image *image) { return PNG_IMAGE_ROW_STRIDE(*image); }
static inline size_t photofs_png_buffer_size(const png_image *image) { return PNG_IMAGE_SIZE(*image); }
static inline int photofs_png_write_to_memory(png_image *image, void *memory, png_alloc_size_t *memory_bytes,
                                              const void *buffer, png_int_32 row_stride) {
    return png_image_write_to_memory(image, memory, memory_bytes, 0, buffer, row_stride, NULL);
}
#endif
