// png_stats A.png [B.png]: prints "size W H colours N brightness M" (mean, 0 .. 255) for A and, with B, "differ F" (the
// fraction of pixels that differ). Used by gui_test.sh to judge screenshots.
// png_stats A.png --box RRGGBB[,RRGGBB...]: also "box X0 Y0 X1 Y1 count N", the bounding box of the pixels of exactly
// those colours (X1, Y1 inclusive; "box none count 0" when there are none): where something of known colours was drawn.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

#define STB_IMAGE_IMPLEMENTATION
#include <stb_image.h>

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: png_stats A.png [B.png]\n");
        return 2;
    }
    int w = 0, h = 0, n = 0;
    unsigned char* a = stbi_load(argv[1], &w, &h, &n, 4);
    if (!a) {
        std::fprintf(stderr, "png_stats: cannot read %s\n", argv[1]);
        return 1;
    }
    std::set<unsigned> colours;
    double brightness = 0;  // mean of R, G, B over the picture, 0 .. 255
    for (int i = 0; i < w * h; ++i) {
        colours.insert(a[4 * i] << 16 | a[4 * i + 1] << 8 | a[4 * i + 2]);
        brightness += (a[4 * i] + a[4 * i + 1] + a[4 * i + 2]) / 3.0;
    }
    std::printf("size %d %d colours %zu brightness %.0f\n", w, h, colours.size(),
                w > 0 && h > 0 ? brightness / (static_cast<double>(w) * h) : 0.0);
    if (argc > 3 && std::strcmp(argv[2], "--box") == 0) {
        std::set<unsigned> wanted;
        for (const char* p = argv[3]; *p;) {
            char* end = nullptr;
            wanted.insert(static_cast<unsigned>(std::strtoul(p, &end, 16)));
            p = *end == ',' ? end + 1 : end + std::strlen(end);
        }
        int x0 = w, y0 = h, x1 = -1, y1 = -1;
        long count = 0;
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x) {
                const unsigned char* q = a + 4 * (static_cast<long>(y) * w + x);
                if (!wanted.count(static_cast<unsigned>(q[0] << 16 | q[1] << 8 | q[2]))) continue;
                ++count;
                x0 = x < x0 ? x : x0, y0 = y < y0 ? y : y0, x1 = x > x1 ? x : x1, y1 = y > y1 ? y : y1;
            }
        if (count) std::printf("box %d %d %d %d count %ld\n", x0, y0, x1, y1, count);
        else std::printf("box none count 0\n");
        stbi_image_free(a);
        return 0;
    }
    if (argc > 2) {
        int w2 = 0, h2 = 0;
        unsigned char* b = stbi_load(argv[2], &w2, &h2, &n, 4);
        if (!b || w2 != w || h2 != h) {
            std::printf("differ 1\n");
            return 0;
        }
        long diff = 0;
        for (int i = 0; i < w * h * 4; i += 4)
            diff += a[i] != b[i] || a[i + 1] != b[i + 1] || a[i + 2] != b[i + 2];
        std::printf("differ %.6f\n", static_cast<double>(diff) / (w * h));
        stbi_image_free(b);
    }
    stbi_image_free(a);
    return 0;
}
