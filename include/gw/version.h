#ifndef GW_VERSION_H
#define GW_VERSION_H

#define GW_VERSION "0.1.0"

#endif
