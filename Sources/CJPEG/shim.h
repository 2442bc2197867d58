/* CJPEG: libjpeg(-turbo) for Swift. libjpeg reports errors by longjmp, which Swift cannot catch, so every
   call that may fail runs inside one of these C functions, which own the setjmp and return an error string. */
#ifndef PHOTOFS_CJPEG_SHIM_H
#define PHOTOFS_CJPEG_SHIM_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <jpeglib.h>
#include <jerror.h>

struct photofs_jpeg_error {
    struct jpeg_error_mgr manager;
    jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
    /* libjpeg only warns when the data ends early (it pads with gray); for photofs that is a corrupt file. */
    int premature_end;
};

static void photofs_jpeg_error_exit(j_common_ptr cinfo) {
    struct photofs_jpeg_error *error = (struct photofs_jpeg_error *)cinfo->err;
    (*cinfo->err->format_message)(cinfo, error->message);
    longjmp(error->jump, 1);
}

/* Silence libjpeg's warnings on stderr (a corrupt-data warning still yields an image; callers decide). */
static void photofs_jpeg_output_message(j_common_ptr cinfo) { (void)cinfo; }

/* Warnings (msg_level -1) are counted; the one for data that ends early is remembered. */
static void photofs_jpeg_emit_message(j_common_ptr cinfo, int msg_level) {
    if (msg_level < 0) {
        cinfo->err->num_warnings++;
        if (cinfo->err->msg_code == JWRN_JPEG_EOF) ((struct photofs_jpeg_error *)cinfo->err)->premature_end = 1;
    }
}

/* Routes libjpeg's errors to photofs_jpeg_error_exit (longjmp back to the caller's setjmp) and silences
   its warnings. The setjmp itself must stay in each calling function: its frame has to be live. */
static inline struct jpeg_error_mgr *photofs_jpeg_errors(struct photofs_jpeg_error *jerr) {
    struct jpeg_error_mgr *manager = jpeg_std_error(&jerr->manager);
    manager->error_exit = photofs_jpeg_error_exit;
    manager->output_message = photofs_jpeg_output_message;
    manager->emit_message = photofs_jpeg_emit_message;
    jerr->premature_end = 0;
    return manager;
}

static inline void photofs_jpeg_copy_error(const char *message, char *error, size_t error_size) {
    if (error != NULL && error_size > 0) {
        strncpy(error, message, error_size - 1);
        error[error_size - 1] = 0;
    }
}

/* Encodes 8-bit pixels (1 = gray, 3 = RGB, 4 = CMYK components) as a JPEG, baseline or progressive, into a
   malloc'd buffer the caller frees. Returns 0 on success. */
static inline int photofs_jpeg_encode(const unsigned char *pixels, int width, int height, int components,
                                      int quality, int progressive, unsigned char **out, unsigned long *out_size,
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
    cinfo.in_color_space = components == 1 ? JCS_GRAYSCALE : components == 4 ? JCS_CMYK : JCS_RGB;
    jpeg_set_defaults(&cinfo);
    jpeg_set_quality(&cinfo, quality, TRUE);
    if (progressive) jpeg_simple_progression(&cinfo);
    jpeg_start_compress(&cinfo, TRUE);
    while (cinfo.next_scanline < cinfo.image_height) {
        JSAMPROW row = (JSAMPROW)(pixels + (size_t)cinfo.next_scanline * (size_t)width * (size_t)components);
        jpeg_write_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_compress(&cinfo);
    jpeg_destroy_compress(&cinfo);
    return 0;
}

/* Converts one row of libjpeg CMYK output to RGB. Adobe's encoders (the usual source of CMYK JPEGs) store the
   components inverted, which libjpeg passes through; `inverted` is cinfo.saw_Adobe_marker. */
static inline void photofs_jpeg_cmyk_row_to_rgb(const unsigned char *cmyk, unsigned char *rgb, unsigned int width,
                                                int inverted) {
    for (unsigned int x = 0; x < width; x++) {
        unsigned int c = cmyk[4 * x], m = cmyk[4 * x + 1], y = cmyk[4 * x + 2], k = cmyk[4 * x + 3];
        if (!inverted) { c = 255 - c; m = 255 - m; y = 255 - y; k = 255 - k; }
        rgb[3 * x] = (unsigned char)((c * k + 127) / 255);
        rgb[3 * x + 1] = (unsigned char)((m * k + 127) / 255);
        rgb[3 * x + 2] = (unsigned char)((y * k + 127) / 255);
    }
}

/* Decodes a JPEG held in memory to 8-bit pixels: gray stays gray (1 component), everything else becomes RGB
   (3; CMYK and YCCK converted here, libjpeg cannot), scaled by 1/scale_denom in the DCT domain (1, 2, 4 or 8).
   max_pixels (0 = no limit) is checked against the header before any pixel is decoded.
   dc_only: at 1/8 a pixel is exactly a block's DC coefficient, so for a progressive JPEG whose first scan
   carries the DC of every component only that scan is decoded (buffered-image mode, output pass 1) instead
   of every scan (*used_dc_only says whether it happened). *pixels is malloc'd; the caller frees it.
   Returns 0 on success, -2 for too many pixels. */
static inline int photofs_jpeg_decode(const unsigned char *data, unsigned long size, int scale_denom,
                                      unsigned long max_pixels, int dc_only, int *width, int *height,
                                      int *components, int *used_dc_only, unsigned char **pixels,
                                      char *error, size_t error_size) {
    struct jpeg_decompress_struct cinfo;
    struct photofs_jpeg_error jerr;
    unsigned char *volatile row_buffer = NULL;
    memset(&cinfo, 0, sizeof cinfo);
    *pixels = NULL;
    *used_dc_only = 0;
    cinfo.err = photofs_jpeg_errors(&jerr);
    if (setjmp(jerr.jump)) {
        photofs_jpeg_copy_error(jerr.message, error, error_size);
        jpeg_destroy_decompress(&cinfo);
        free(*pixels);
        free(row_buffer);
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
    int cmyk = cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK;
    if (cinfo.jpeg_color_space == JCS_GRAYSCALE) cinfo.out_color_space = JCS_GRAYSCALE;
    else if (cmyk) cinfo.out_color_space = JCS_CMYK;
    else cinfo.out_color_space = JCS_RGB;
    cinfo.scale_num = 1;
    cinfo.scale_denom = (unsigned int)(scale_denom > 0 ? scale_denom : 1);
    /* jpeg_read_header stopped at the first scan's header, so its parameters are known here. */
    int first_scan_is_all_dc = cinfo.progressive_mode && cinfo.Ss == 0 && cinfo.Se == 0
                               && cinfo.comps_in_scan == cinfo.num_components;
    int buffered = dc_only && cinfo.scale_denom == 8 && first_scan_is_all_dc;
    if (buffered) {
        cinfo.buffered_image = TRUE;
        cinfo.do_block_smoothing = FALSE; /* smoothing guesses AC terms, which a 1x1 IDCT never uses */
    }
    jpeg_start_decompress(&cinfo);
    if (buffered) jpeg_start_output(&cinfo, 1);
    unsigned int out_components = cinfo.out_color_space == JCS_GRAYSCALE ? 1 : 3;
    size_t stride = (size_t)cinfo.output_width * out_components;
    *pixels = (unsigned char *)malloc(stride * cinfo.output_height);
    if (cmyk) row_buffer = (unsigned char *)malloc((size_t)cinfo.output_width * 4);
    if (*pixels == NULL || (cmyk && row_buffer == NULL)) {
        photofs_jpeg_copy_error("out of memory", error, error_size);
        jpeg_destroy_decompress(&cinfo);
        free(*pixels);
        free(row_buffer);
        *pixels = NULL;
        return -3;
    }
    while (cinfo.output_scanline < cinfo.output_height) {
        unsigned char *target = *pixels + (size_t)cinfo.output_scanline * stride;
        JSAMPROW row = cmyk ? row_buffer : target;
        jpeg_read_scanlines(&cinfo, &row, 1);
        if (cmyk) photofs_jpeg_cmyk_row_to_rgb(row_buffer, target, cinfo.output_width, cinfo.saw_Adobe_marker);
    }
    if (jerr.premature_end) {
        photofs_jpeg_copy_error("the JPEG data ends early (truncated file)", error, error_size);
        jpeg_destroy_decompress(&cinfo);
        free(*pixels);
        free(row_buffer);
        *pixels = NULL;
        return -4;
    }
    *width = (int)cinfo.output_width;
    *height = (int)cinfo.output_height;
    *components = (int)out_components;
    if (buffered) {
        /* The later scans are never read: abort instead of finish (finish would consume them). */
        jpeg_finish_output(&cinfo);
        jpeg_abort_decompress(&cinfo);
        *used_dc_only = 1;
    } else {
        jpeg_finish_decompress(&cinfo);
    }
    free(row_buffer);
    jpeg_destroy_decompress(&cinfo);
    return 0;
}
/* Reads only the header: dimensions, without decoding a pixel (to pick a DCT scale or refuse a bomb), and
   *coefficient_bytes: what libjpeg allocates at once to decode an image spread over several scans (progressive,
   or sequential with one component per scan): the whole image's DCT coefficients, 64 JCOEFs per block of each
   component, at any output scale (0 for a single interleaved scan, decoded a band of blocks at a time). */
static inline int photofs_jpeg_read_size(const unsigned char *data, unsigned long size, int *width, int *height,
                                         unsigned long long *coefficient_bytes, char *error, size_t error_size) {
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
    *coefficient_bytes = 0;
    if (cinfo.progressive_mode || cinfo.comps_in_scan < cinfo.num_components) {
        /* jdcoefct.c's whole-image arrays: blocks rounded up to the component's sampling factors. */
        for (int c = 0; c < cinfo.num_components; c++) {
            jpeg_component_info *component = &cinfo.comp_info[c];
            unsigned long long across = (component->width_in_blocks + component->h_samp_factor - 1)
                                        / component->h_samp_factor * component->h_samp_factor;
            unsigned long long down = (component->height_in_blocks + component->v_samp_factor - 1)
                                      / component->v_samp_factor * component->v_samp_factor;
            *coefficient_bytes += across * down * DCTSIZE2 * sizeof(JCOEF);
        }
    }
    jpeg_destroy_decompress(&cinfo);
    return 0;
}
#endif
