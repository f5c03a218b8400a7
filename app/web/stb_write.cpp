// stb_image_write's code for the page (the desktop links Debian's libstb): PNG files of the
// window (a screenshot, the handout's pictures).
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>
