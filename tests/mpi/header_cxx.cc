// SPDX-License-Identifier: MIT
// header_cxx.cc - header.c compiled as C++.
#include "header.c"
