/* CGeonames: Debian's libgeonames (the GeoNames cities of 15,000 people or more, compiled into the library)
   for Swift; it brings GLib, which its API uses. Photo files are hashed with libcrypto (CCrypto), which is
   several times faster than GLib's GChecksum on 128 KiB prefixes. */
#ifndef PHOTOFS_CGEONAMES_SHIM_H
#define PHOTOFS_CGEONAMES_SHIM_H
#include <geonames.h>
#include <glib.h>
#endif
