/* Forwards to probe/layout_render.h, the header's name since issue 40. Kept only while nine
 * files of reports/src still include this name (reports/ was being moved by another change at
 * the time): once they include probe/layout_render.h, delete this file. */
#ifndef PROBE_RENDER_FORWARD_H
#define PROBE_RENDER_FORWARD_H
#include "probe/layout_render.h"
#endif
