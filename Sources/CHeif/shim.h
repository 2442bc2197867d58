/* CHeif: libheif for Swift. Errors come back as a struct heif_error value, which Swift reads directly; the
   shim gathers the header (Debian installs it under the multiarch include directory pkg-config names). */
#ifndef PHOTOFS_CHEIF_SHIM_H
#define PHOTOFS_CHEIF_SHIM_H
#include <libheif/heif.h>
#endif
