/* The launcher of the GPU bundle (scripts/gpu-bundle.sh): bin/<program> is a link to this one
 * static binary, which runs bin/.real/<program> through the bundle's own dynamic loader with the
 * bundle's libraries first, so the programs need nothing of the machine's C library or packages:
 *
 *   <bundle>/lib/ld-linux-x86-64.so.2 --library-path <bundle>/lib[:$HIT_BUNDLE_MACHINE_LIBS]
 *       --argv0 <argv[0]> <bundle>/bin/.real/<program> ARGS...
 *
 * HIT_BUNDLE_MACHINE_LIBS names the machine's folders of what the bundle leaves out (the CUDA
 * driver, cuBLAS, cuSOLVER); scripts/gpu-check.sh finds them. argv[0] stays the link's path, so
 * MPICH's mpiexec finds hydra_pmi_proxy beside itself (another link) and a program started by it
 * comes through here again. Static: it needs no loader and no library to start. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fail(const char* what, const char* path) {
  fprintf(stderr, "hit-bundle: %s %s: %s\n", what, path, strerror(errno));
  return 127;
}

int main(int argc, char** argv) {
  char root[PATH_MAX];
  /* <bundle>/bin/.launch, whatever link started it. */
  ssize_t len = readlink("/proc/self/exe", root, sizeof root - 1);
  if (len <= 0) return fail("cannot read", "/proc/self/exe");
  root[len] = '\0';
  for (int up = 0; up < 2; ++up) {
    char* slash = strrchr(root, '/');
    if (slash == NULL) return fail("unexpected location", root);
    *slash = '\0';
  }
  const char* name = strrchr(argv[0], '/');
  name = name != NULL ? name + 1 : argv[0];
  if (strlen(name) > 255) return fail("name too long:", name);

  char real[PATH_MAX + 512], loader[PATH_MAX + 64], libs[PATH_MAX * 4];
  snprintf(real, sizeof real, "%s/bin/.real/%s", root, name);
  snprintf(loader, sizeof loader, "%s/lib/ld-linux-x86-64.so.2", root);
  const char* machine = getenv("HIT_BUNDLE_MACHINE_LIBS");
  if (machine != NULL && machine[0] != '\0') {
    snprintf(libs, sizeof libs, "%s/lib:%s", root, machine);
  } else {
    snprintf(libs, sizeof libs, "%s/lib", root);
  }
  if (access(real, X_OK) != 0) return fail("no program", real);

  char** args = calloc((size_t)argc + 7, sizeof *args);
  if (args == NULL) return fail("out of memory for", name);
  int k = 0;
  args[k++] = loader;
  args[k++] = "--library-path";
  args[k++] = libs;
  args[k++] = "--argv0";
  args[k++] = argv[0];
  args[k++] = real;
  for (int i = 1; i < argc; ++i) args[k++] = argv[i];
  args[k] = NULL;
  execv(loader, args);
  return fail("cannot run", loader);
}
