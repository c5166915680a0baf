// pcsc-lite's PC/SC API (`pkg-config libpcsclite` puts /usr/include/PCSC on the include path).
#include <winscard.h>
