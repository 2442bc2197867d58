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

/* Row-by-row decoding of a JPEG held in memory, for decoders that never hold the whole image: 8-bit pixels,
   gray stays gray (1 component), everything else becomes RGB (3; CMYK and YCCK converted here, libjpeg cannot),
   scaled by 1/scale_denom in the DCT domain (1, 2, 4 or 8). The error manager's jump buffer is set again by each
   function below: libjpeg longjmps into whichever of them is running. */
struct photofs_jpeg_rows {
    struct jpeg_decompress_struct cinfo;
    struct photofs_jpeg_error jerr;
    unsigned char *cmyk_row;
    int created, cmyk, buffered;
};

/* Opens data[0..<size] (which must stay valid until photofs_jpeg_rows_close) and starts decompressing.
   max_pixels (0 = no limit) is checked against the header before any pixel is decoded.
   dc_only: at 1/8 a pixel is exactly a block's DC coefficient, so for a progressive JPEG whose first scan
   carries the DC of every component only that scan is decoded (buffered-image mode, output pass 1) instead
   of every scan (*used_dc_only says whether it happened). Returns 0 with the output's *width, *height and
   *components set; -1 on error (rows->jerr.message), -2 for too many pixels, -3 out of memory. Call
   photofs_jpeg_rows_close in every case. */
static inline int photofs_jpeg_rows_open(struct photofs_jpeg_rows *rows, const unsigned char *data, unsigned long size,
                                         int scale_denom, unsigned long max_pixels, int dc_only, int *width,
                                         int *height, int *components, int *used_dc_only) {
    memset(rows, 0, sizeof *rows);
    *used_dc_only = 0;
    rows->cinfo.err = photofs_jpeg_errors(&rows->jerr);
    if (setjmp(rows->jerr.jump)) return -1;
    jpeg_create_decompress(&rows->cinfo);
    rows->created = 1;
    jpeg_mem_src(&rows->cinfo, data, size);
    jpeg_read_header(&rows->cinfo, TRUE);
    struct jpeg_decompress_struct *cinfo = &rows->cinfo;
    if (max_pixels != 0 && (unsigned long)cinfo->image_width * (unsigned long)cinfo->image_height > max_pixels) {
        photofs_jpeg_copy_error("image has more pixels than allowed", rows->jerr.message, sizeof rows->jerr.message);
        return -2;
    }
    rows->cmyk = cinfo->jpeg_color_space == JCS_CMYK || cinfo->jpeg_color_space == JCS_YCCK;
    if (cinfo->jpeg_color_space == JCS_GRAYSCALE) cinfo->out_color_space = JCS_GRAYSCALE;
    else if (rows->cmyk) cinfo->out_color_space = JCS_CMYK;
    else cinfo->out_color_space = JCS_RGB;
    cinfo->scale_num = 1;
    cinfo->scale_denom = (unsigned int)(scale_denom > 0 ? scale_denom : 1);
    /* jpeg_read_header stopped at the first scan's header, so its parameters are known here. */
    int first_scan_is_all_dc = cinfo->progressive_mode && cinfo->Ss == 0 && cinfo->Se == 0
                               && cinfo->comps_in_scan == cinfo->num_components;
    rows->buffered = dc_only && cinfo->scale_denom == 8 && first_scan_is_all_dc;
    if (rows->buffered) {
        cinfo->buffered_image = TRUE;
        cinfo->do_block_smoothing = FALSE; /* smoothing guesses AC terms, which a 1x1 IDCT never uses */
    }
    jpeg_start_decompress(cinfo);
    if (rows->buffered) jpeg_start_output(cinfo, 1);
    if (rows->cmyk) {
        rows->cmyk_row = (unsigned char *)malloc((size_t)cinfo->output_width * 4);
        if (rows->cmyk_row == NULL) {
            photofs_jpeg_copy_error("out of memory", rows->jerr.message, sizeof rows->jerr.message);
            return -3;
        }
    }
    *width = (int)cinfo->output_width;
    *height = (int)cinfo->output_height;
    *components = cinfo->out_color_space == JCS_GRAYSCALE ? 1 : 3;
    *used_dc_only = rows->buffered;
    return 0;
}

/* Decodes the next `count` rows into buffer (rows `stride` bytes apart). Returns 0; -1 on error
   (rows->jerr.message); -4 when the last row was read and the data had ended early (libjpeg only warns and
   pads with gray; for photofs that is a truncated file); -5 when asked for more rows than are left. */
static inline int photofs_jpeg_rows_read(struct photofs_jpeg_rows *rows, unsigned char *buffer, size_t stride, int count) {
    struct jpeg_decompress_struct *cinfo = &rows->cinfo;
    if (count < 0 || (unsigned long)cinfo->output_scanline + (unsigned long)count > cinfo->output_height) {
        photofs_jpeg_copy_error("more rows asked for than the image has", rows->jerr.message, sizeof rows->jerr.message);
        return -5;
    }
    if (setjmp(rows->jerr.jump)) return -1;
    for (int row = 0; row < count; row++) {
        unsigned char *target = buffer + (size_t)row * stride;
        JSAMPROW output = rows->cmyk ? rows->cmyk_row : target;
        if (jpeg_read_scanlines(cinfo, &output, 1) != 1) {
            photofs_jpeg_copy_error("the JPEG decoder stopped early", rows->jerr.message, sizeof rows->jerr.message);
            return -1;
        }
        if (rows->cmyk) photofs_jpeg_cmyk_row_to_rgb(rows->cmyk_row, target, cinfo->output_width, cinfo->saw_Adobe_marker);
    }
    if (cinfo->output_scanline == cinfo->output_height && rows->jerr.premature_end) {
        photofs_jpeg_copy_error("the JPEG data ends early (truncated file)", rows->jerr.message, sizeof rows->jerr.message);
        return -4;
    }
    return 0;
}

/* Frees the decoder. Nothing after the last row is read: in DC-only mode the later scans, otherwise the
   markers before EOI (jpeg_finish_decompress would parse them and could fail; nothing there is pixels).
   No setjmp needed: jpeg_destroy_decompress only frees. */
static inline void photofs_jpeg_rows_close(struct photofs_jpeg_rows *rows) {
    if (rows->created) jpeg_destroy_decompress(&rows->cinfo);
    rows->created = 0;
    free(rows->cmyk_row);
    rows->cmyk_row = NULL;
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
