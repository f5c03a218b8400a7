#pragma once
// Files compiled into the library by cmake/EmbedFiles.cmake.
#include <string_view>

// assets/*: the bytes of the asset with this base name ("presets.json"), empty when none.
std::string_view headsplit_asset(std::string_view name);

// shaders/*: the source of the kernel or include with this base name ("matmul_plain.comp").
std::string_view headsplit_shader(std::string_view name);
