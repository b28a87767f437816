// cmake/odr_check_main.cc - the program of the ODR check (LLMCO2_ODR_CHECK, make odr-check): every llmco2 library is
// linked into it whole with link-time optimisation, so GCC sees every type of every translation unit at once and
// -Werror=odr fails the link on a type defined twice with different layouts. It is built, never run.
int main() { return 0; }
