// cmake/odr_probe_a.cc - half of the ODR check's self-test (make odr-check): OdrProbe here holds an int, in
// odr_probe_b.cc two doubles. Linking the two with -Werror=odr must fail; if it links, the check would miss the
// violation it exists for.
namespace llmco2 {
struct OdrProbe {
  int a;
};
int odr_probe_a(OdrProbe* p) { return p->a; }
}  // namespace llmco2

int main() { return 0; }
