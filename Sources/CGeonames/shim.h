/* CGeonames: Debian's libgeonames (the GeoNames cities of 15,000 people or more, compiled into the library)
   for Swift. It brings GLib, whose GChecksum (SHA-256) also hashes photo files for folder imports: one C
   library already linked rather than a second hashing dependency. */
#ifndef PHOTOFS_CGEONAMES_SHIM_H
#define PHOTOFS_CGEONAMES_SHIM_H
#include <geonames.h>
#include <glib.h>
#endif
