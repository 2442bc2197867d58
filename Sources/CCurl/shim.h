/* CCurl: libcurl for Swift; curl_easy_setopt and curl_easy_getinfo are variadic, so each argument type gets a wrapper. */
#ifndef PHOTOFS_CCURL_SHIM_H
#define PHOTOFS_CCURL_SHIM_H
#include <curl/curl.h>

typedef size_t (*photofs_curl_data_fn)(char *data, size_t size, size_t count, void *userdata);

static inline CURLcode photofs_curl_set_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode photofs_curl_set_off(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode photofs_curl_set_string(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode photofs_curl_set_pointer(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode photofs_curl_set_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode photofs_curl_set_data_fn(CURL *h, CURLoption o, photofs_curl_data_fn v) { return curl_easy_setopt(h, o, v); }

static inline CURLcode photofs_curl_get_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode photofs_curl_get_off(CURL *h, CURLINFO i, curl_off_t *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode photofs_curl_get_string(CURL *h, CURLINFO i, char **v) { return curl_easy_getinfo(h, i, v); }

#endif
