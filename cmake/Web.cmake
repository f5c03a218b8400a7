# The page (`make web`, emcmake): the same engine and window code compiled by Debian's
# emscripten. Debian's header-only libraries (xtensor, Eigen, nlohmann-json, CLI11, stb) are
# used from /usr/include through a folder of links to their own folders (/usr/include itself
# holds glibc's headers, which are not emscripten's); Dear ImGui 1.86 is compiled from Debian's
# source package (tools/web/imgui_source.sh); GLFW and WebGL2 are emscripten's own. The
# targets keep the desktop's names, so core/ and app/ link the same way.
set(HEADSPLIT_IMGUI_SOURCE "" CACHE PATH "Dear ImGui 1.86's sources (Debian's source package)")
if(NOT EXISTS "${HEADSPLIT_IMGUI_SOURCE}/imgui.cpp")
  message(FATAL_ERROR "HEADSPLIT_IMGUI_SOURCE=${HEADSPLIT_IMGUI_SOURCE} has no imgui.cpp; "
                      "run tools/web/imgui_source.sh DIR (make web does)")
endif()

set(HEADSPLIT_DEBIAN_INCLUDE ${CMAKE_BINARY_DIR}/debian-include)
file(MAKE_DIRECTORY ${HEADSPLIT_DEBIAN_INCLUDE})
foreach(link xtensor xtl nlohmann CLI eigen3/Eigen stb/stb_image_write.h)
  if(NOT EXISTS /usr/include/${link})
    message(FATAL_ERROR "/usr/include/${link} is missing; make web installs the Debian packages it needs")
  endif()
  get_filename_component(name ${link} NAME)
  file(CREATE_LINK /usr/include/${link} ${HEADSPLIT_DEBIAN_INCLUDE}/${name} SYMBOLIC)
endforeach()

function(headsplit_web_target name)
  add_library(${name} INTERFACE IMPORTED GLOBAL)
  set_target_properties(${name} PROPERTIES INTERFACE_SYSTEM_INCLUDE_DIRECTORIES ${HEADSPLIT_DEBIAN_INCLUDE}
                                           INTERFACE_INCLUDE_DIRECTORIES ${HEADSPLIT_DEBIAN_INCLUDE})
endfunction()
foreach(t xtensor Eigen3::Eigen nlohmann_json::nlohmann_json CLI11::CLI11 PkgConfig::EPOXY Threads::Threads)
  headsplit_web_target(${t})
endforeach()

# Threads (the trace is computed off the frame; the page needs COOP/COEP headers, see
# docs/page.md), C++ exceptions (every refusal is one), and wasm SIMD for Eigen's products.
# HEADSPLIT_WEB_THREADS=OFF builds the single-threaded page (app-single.*) for pages the
# browser gives no shared memory (plain http:// on a LAN address): every object is compiled
# again, since objects made with -pthread use shared memory's atomics.
option(HEADSPLIT_WEB_THREADS "the threaded page (app.*); OFF: the single-threaded one (app-single.*)" ON)
if(HEADSPLIT_WEB_THREADS)
  add_compile_options(-pthread)
  add_link_options(-pthread -sPTHREAD_POOL_SIZE=4)
endif()
add_compile_options(-fexceptions -msimd128)
add_link_options(-fexceptions)

add_library(headsplit_imgui STATIC
  ${HEADSPLIT_IMGUI_SOURCE}/imgui.cpp ${HEADSPLIT_IMGUI_SOURCE}/imgui_draw.cpp
  ${HEADSPLIT_IMGUI_SOURCE}/imgui_tables.cpp ${HEADSPLIT_IMGUI_SOURCE}/imgui_widgets.cpp
  ${HEADSPLIT_IMGUI_SOURCE}/backends/imgui_impl_glfw.cpp ${HEADSPLIT_IMGUI_SOURCE}/backends/imgui_impl_opengl3.cpp)
target_include_directories(headsplit_imgui SYSTEM PUBLIC ${HEADSPLIT_IMGUI_SOURCE})
# 32-bit indices: WebGL2 has no glDrawElementsBaseVertex, so ImGui cannot split a window's
# draw list into pieces of 65,536 vertices as it does on the desktop, and the heads panel at
# gpt2-small's 128 tokens (a 128 x 128 map per head, 4 vertices a cell) passes that; with
# 16-bit indices the cells past it were drawn from the wrong vertices (stray triangles).
target_compile_definitions(headsplit_imgui PUBLIC IMGUI_IMPL_OPENGL_ES3 "ImDrawIdx=unsigned int")
target_link_options(headsplit_imgui INTERFACE -sUSE_GLFW=3)
add_library(PkgConfig::IMGUI ALIAS headsplit_imgui)
add_library(PkgConfig::GLFW INTERFACE IMPORTED GLOBAL)
