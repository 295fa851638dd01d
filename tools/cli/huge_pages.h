#pragma once
// Transparent huge pages for the model's heap.
//
// A model of tens of thousands of nodes is hundreds of megabytes of small
// objects, each page touched once while it is built and brought up. On a
// virtual machine a 4 KiB page fault costs several microseconds, a third of
// an 11,664-host run; with glibc's malloc on transparent huge pages
// (tunable glibc.malloc.hugetlb=1, glibc 2.35 and later) there are ~15x
// fewer. glibc reads its tunables only when a program starts, so the
// commands that build large models call this first: it re-executes ibfab
// once with the tunable added to GLIBC_TUNABLES, and in the re-executed
// process puts the environment back as the user gave it, so that programs
// ibfab starts (ibfab exec, ibfab validate) see no difference.
//
// Nothing is done when the kernel has transparent huge pages off, when
// GLIBC_TUNABLES already says how malloc should use them, or when
// IBFAB_HUGE_PAGES=0. If the re-execution fails, the run goes on as it is.
namespace ibfab::cli {

void use_huge_pages(char** argv);

}  // namespace ibfab::cli
