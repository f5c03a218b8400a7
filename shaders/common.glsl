// Shared by every HeadSplit kernel (inlined by the loader where a .comp says
// #include "common.glsl"). Tensors are up to 4-D, strided, in float SSBOs; shapes and
// strides arrive as ivec4, leading dims padded with size 1.

// Row-major position of linear element `i` of a tensor of `shape`, mapped through
// `strides` to a memory offset (in elements).
int strided_offset(int i, ivec4 shape, ivec4 strides) {
    int d3 = i % shape.w; i /= shape.w;
    int d2 = i % shape.z; i /= shape.z;
    int d1 = i % shape.y; i /= shape.y;
    return i * strides.x + d1 * strides.y + d2 * strides.z + d3 * strides.w;
}

// Element index when a 1-D job is dispatched as a 2-D grid of workgroups (x up to 65535).
int linear_invocation(uint local_size) {
    return int(gl_WorkGroupID.y * gl_NumWorkGroups.x * local_size + gl_GlobalInvocationID.x);
}
