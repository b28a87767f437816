// cmake/odr_probe_b.cc - the other half of the ODR check's self-test: the same type as odr_probe_a.cc's, another
// layout.
namespace llmco2 {
struct OdrProbe {
  double a, b;
};
double odr_probe_b(OdrProbe* p) { return p->a + p->b; }
}  // namespace llmco2
