"""The regularized incomplete gamma functions ``gammainc(a, x) = P(a, x)`` and
``gammaincc(a, x) = Q(a, x) = 1 - P(a, x)`` (SciPy's argument order) as kernel
expressions for the primitive table (`numgrad.ops`), and their vector-Jacobian products.

Each is one Python expression (built as `numgrad.special_math` builds digamma's), in
float64 on every target; `numgrad.special_math.numpy_form` makes it the row's reference.
Every method has a fixed number of terms, unrolled, chosen so that the whole range
converges (docs/decisions.md has the accuracy measured against SciPy and mpmath):

- ``a >= TEMME_FROM`` and ``TEMME_LOW <= t <= TEMME_HIGH``, ``t = (x - a) / a``: Temme's
  uniform expansion (DLMF 8.12), ``Q = erfc(eta sqrt(a / 2)) / 2 + exp(-a eta**2 / 2) /
  sqrt(2 pi a) sum_k c_k(eta) / a**k``, ``eta**2 / 2 = t - log1p(t)``; the smaller of P
  and Q is computed, the other is 1 minus it. (The series and the fraction below need
  O(sqrt(a)) terms where x is near a; this needs none more as a grows.)
- else ``x < a + 1``: the series ``P = x**a exp(-x) / Gamma(a + 1) sum_n x**n / ((a + 1)
  ... (a + n))`` (DLMF 8.7.1), `SERIES_TERMS` terms;
- else, for ``a < SMALL_A`` and ``x < SMALL_X``, where the fraction converges slowly:
  ``Q = -expm1(u) - exp(u) a sum_{n>=1} (-x)**n / (n! (a + n))``, ``u = a log x - log
  Gamma(1 + a)`` (DLMF 8.7.3), log Gamma(1 + a) by its series (`LGAMMA2`), so that Q keeps
  its relative accuracy as a goes to 0;
- else Legendre's continued fraction for Q (DLMF 8.9.2), `FRACTION_TERMS` terms evaluated
  backwards.

The prefactor ``x**a exp(-x) / Gamma(a + 1)`` is ``exp(a log x - x - lgamma(a + 1))``
below a = 10 and ``exp(-a (t - log1p(t))) / (sqrt(2 pi a) Gamma*(a))`` above, Gamma* by
Stirling's series (`STIRLING`), so that no difference of terms as large as ``a log a``
is taken. The coefficient tables come from tools/gamma_coefficients.py (mpmath).
"""

from __future__ import annotations

import functools
import math

from numgrad.special_math import _horner, _let, _let_all

__all__ = ["GAMMAINC", "GAMMAINCC", "gammainc_vjp", "gammaincc_vjp"]

TEMME_FROM, TEMME_LOW, TEMME_HIGH = 20.0, -0.6, 1.0
SERIES_TERMS, FRACTION_TERMS, SMALL_TERMS = 50, 70, 22
SMALL_A, SMALL_X = 0.5, 1.5
#: the prefactor takes Stirling's series from a = 10
STIRLING_FROM = 10.0
#: B_2j / (2j (2j - 1)), j = 1..8: log Gamma*(a) = sum_j STIRLING[j] / a**(2j - 1)
STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156,
            -3617 / 122400)
#: d[k][n], Temme's c_k(eta) = sum_n d[k][n] eta**n, each row as long as a >= 20 and
#: |eta| <= 0.82 need (|eta| is 0.80 at t = -0.6, 0.78 at t = 1)
TEMME = (
    (-0.3333333333333333, 0.08333333333333333, -0.014814814814814815, 0.0011574074074074073,
     0.0003527336860670194, -0.0001787551440329218, 3.919263178522438e-05,
     -2.185448510679992e-06, -1.85406221071516e-06, 8.296711340953087e-07,
     -1.7665952736826078e-07, 6.707853543401498e-09, 1.0261809784240309e-08,
     -4.382036018453353e-09, 9.14769958223679e-10, -2.5514193994946248e-11,
     -5.830772132550426e-11, 2.4361948020667415e-11, -5.0276692801141755e-12,
     1.1004392031956135e-13, 3.371763262400985e-13, -1.392388722418162e-13,
     2.8534893807047445e-14, -5.139111834242572e-16, -1.9752288294349442e-15,
     8.099521156704561e-16),
    (-0.001851851851851852, -0.003472222222222222, 0.0026455026455026454,
     -0.0009902263374485596, 0.00020576131687242798, -4.018775720164609e-07,
     -1.8098550334489977e-05, 7.64916091608111e-06, -1.6120900894563446e-06,
     4.647127802807434e-09, 1.378633446915721e-07, -5.752545603517705e-08,
     1.1951628599778148e-08, -1.7543241719747647e-11, -1.0091543710600413e-09,
     4.162792991842583e-10, -8.56390702649298e-11, 6.067215101604758e-14,
     7.1624989648114856e-12, -2.933186643771437e-12, 5.996696365683689e-13,
     -2.1671786527323313e-16, -4.978339972369262e-14, 2.0291628823713425e-14),
    (0.004133597883597883, -0.0026813271604938273, 0.0007716049382716049,
     2.0093878600823047e-06, -0.0001073665322636516, 5.2923448829120125e-05,
     -1.2760635188618728e-05, 3.423578734096138e-08, 1.3721957309062934e-06,
     -6.298992138380055e-07, 1.4280614206064242e-07, -2.0477098421990866e-10,
     -1.409252991086752e-08, 6.228974084922022e-09, -1.3670488396617114e-09,
     9.428356159014678e-13, 1.2872252400089318e-10, -5.5645956134363323e-11,
     1.197593554636698e-11, -4.1689782251838634e-15, -1.0940640427884595e-12,
     4.662239946390136e-13, -9.905105763906907e-14),
    (0.0006494341563786008, 0.00022947209362139917, -0.0004691894943952557,
     0.00026772063206283885, -7.561801671883977e-05, -2.396505113867297e-07,
     1.1082654115347302e-05, -5.6749528269915965e-06, 1.4230900732435883e-06,
     -2.7861080291528143e-11, -1.6958404091930278e-07, 8.099464905388083e-08,
     -1.9111168485973655e-08, 2.3928620439808118e-12, 2.0620131815488797e-09,
     -9.460496661855133e-10, 2.1541049775774907e-10, -1.388823336813903e-14,
     -2.1894761681963938e-11, 9.790998951171684e-12, -2.178219188018096e-12),
    (-0.0008618882909167117, 0.0007840392217200666, -0.0002990724803031902,
     -1.4638452578843418e-06, 6.641498215465122e-05, -3.968365047179435e-05,
     1.1375726970678419e-05, 2.507497226237533e-10, -1.6954149536558305e-06,
     8.907507532205309e-07, -2.292934834000805e-07, 2.956794137544049e-11,
     2.8865829742708783e-08, -1.4189739437803219e-08, 3.4463580499464896e-09,
     -2.3024517174528067e-13, -3.9409233028046403e-10, 1.86023389685045e-10,
     -4.356323005056618e-11),
    (-0.00033679855336635813, -6.972813758365857e-05, 0.0002772753244959392,
     -0.00019932570516188847, 6.797780477937208e-05, 1.419062920643967e-07,
     -1.3594048189768693e-05, 8.018470256334202e-06, -2.291481176508095e-06,
     -3.252473551298454e-10, 3.4652846491085265e-07, -1.8447187191171344e-07,
     4.8240967037894184e-08, -1.7989466721743514e-14, -6.306194500013523e-09,
     3.162417628774568e-09, -7.840924253697429e-10),
    (0.0005313079364639922, -0.0005921664373536939, 0.0002708782096718045,
     7.902353232660328e-07, -8.153969367561969e-05, 5.61168275310625e-05,
     -1.8329116582843375e-05, -3.0796134506033047e-09, 3.465155368803609e-06,
     -2.0291327396058603e-06, 5.788792863149004e-07, 2.338630673826657e-13,
     -8.828600746330484e-08, 4.7435958880408125e-08, -1.2545415020710383e-08),
    (0.00034436760689237765, 5.171790908260592e-05, -0.00033493161081142234,
     0.0002812695154763237, -0.00010976582244684731, -1.2741009095484485e-07,
     2.7744451511563645e-05, -1.8263488805711332e-05, 5.7876949497350525e-06,
     4.93875893393627e-10, -1.0595367014026043e-06, 6.166714376110408e-07,
     -1.7562973359060463e-07),
    (-0.0006526239185953094, 0.0008394987206720873, -0.000438297098541721,
     -6.969091458420552e-07, 0.00016644846642067547, -0.00012783517679769218,
     4.629953263691304e-05, 4.557909867922708e-09, -1.0595271125805195e-05,
     6.783342904865167e-06, -2.1075476666258803e-06),
    (-0.0005967612901927463, -7.204895416020011e-05, 0.0006782308837667328,
     -0.0006401475260262758, 0.00027750107634328704, 1.819700838046515e-07,
     -8.479507117068503e-05, 6.105192082501531e-05, -2.1073920183404862e-05),
    (0.0013324454494800656, -0.0019144384985654776, 0.0011089369134596636,
     9.9324041226423e-07, -0.0005087450129309319, 0.00042735056665392886,
     -0.00016858853767910798),
    (0.001579727660730835, 0.00016251626278391583, -0.0020633421035543276,
     0.00213896861856891, -0.0010108559391263003),
    (-0.004072512119514016,),
)
LGAMMA2 = (0.42278433509846713, 0.3224670334241132, -0.0673523010531981, 0.020580808427784546,
           -0.007385551028673986, 0.0028905103307415234, -0.001192753911703261,
           0.0005096695247430425, -0.00022315475845357939, 9.945751278180853e-05,
           -4.492623673813314e-05, 2.050721277567069e-05, -9.439488275268397e-06,
           4.374866789907488e-06, -2.039215753801366e-06, 9.55141213040742e-07,
           -4.492469198764566e-07, 2.1207184805554665e-07, -1.0043224823968099e-07,
           4.7698101693639804e-08, -2.2711094608943164e-08, 1.0838659214896955e-08,
           -5.183475041970047e-09, 2.4836745438024785e-09, -1.1921401405860912e-09,
           5.731367241678862e-10, -2.7595228851242334e-10, 1.330476437424449e-10)


def _prefactor(a: str, x: str, t: str) -> str:
    """``x**a exp(-x) / Gamma(a + 1)`` (`t` names ``(x - a) / a``)."""
    stirling = _let("ig_w", f"1.0 / {a}",
                    f"ig_w * ({_horner('ig_w * ig_w', STIRLING)})")
    return (f"math.exp({a} * math.log({x}) - {x} - math.lgamma({a} + 1.0)) "
            f"if {a} < {STIRLING_FROM!r} else math.exp(-({_exponent(a, x, t)})) / "
            f"(math.sqrt({2 * math.pi!r} * {a}) * math.exp({stirling}))")


def _exponent(a: str, x: str, t: str) -> str:
    """``a (t - log1p(t)) = x - a - a log(x / a)``: by log1p near x = a, by the log of
    ``x / a`` (whose rounding does not grow) far below."""
    return (f"{a} * ({t} - math.log1p({t})) if {t} > -0.5 else "
            f"{x} - {a} - {a} * math.log({x} / {a})")


def _series(a: str, x: str) -> str:
    """``sum_n x**n / ((a + 1) ... (a + n))``, nested from the last term."""
    s = "1.0"
    for n in range(SERIES_TERMS, 0, -1):
        s = f"1.0 + {x} / ({a} + {float(n)!r}) * ({s})"
    return s


def _fraction(a: str, x: str) -> str:
    """Legendre's ``1 / (x + 1 - a - 1 (1 - a) / (x + 3 - a - 2 (2 - a) / ...))``."""
    f = f"ig_b + {2.0 * FRACTION_TERMS + 1!r}"
    for i in range(FRACTION_TERMS, 0, -1):
        f = f"ig_b + {2.0 * i - 1!r} + {float(i)!r} * ({a} - {float(i)!r}) / ({f})"
    return _let("ig_b", f"{x} - {a}", f"1.0 / ({f})")


def _small_a(a: str, x: str) -> str:
    """Q for small a and x: ``-expm1(u) - exp(u) a sum_{n>=1} (-x)**n / (n! (a + n))``."""
    s = f"{(-1) ** SMALL_TERMS / math.factorial(SMALL_TERMS)!r} / ({a} + {float(SMALL_TERMS)!r})"
    for n in range(SMALL_TERMS - 1, 0, -1):
        s = f"{(-1) ** n / math.factorial(n)!r} / ({a} + {float(n)!r}) + {x} * ({s})"
    lgamma1p = f"{a} * ({_horner(a, LGAMMA2)}) - math.log1p({a})"
    return _let("ig_u", f"{a} * math.log({x}) - ({lgamma1p})",
                f"-math.expm1(ig_u) - math.exp(ig_u) * {a} * {x} * ({s})")


def _temme(a: str, x: str, t: str, lower: bool) -> str:
    """P (`lower`) or Q by Temme's expansion: the smaller directly, 1 minus it else."""
    rows = [f"({_horner('ig_e', row)})" for row in TEMME]
    total = rows[-1]
    for row in reversed(rows[:-1]):
        total = f"{row} + ig_w * ({total})"
    tail = _let("ig_w", f"1.0 / {a}", f"math.exp(-({_exponent(a, x, t)})) / math.sqrt("
                                     f"{2 * math.pi!r} * {a}) * ({total})")
    upper = f"0.5 * math.erfc(ig_e * math.sqrt(0.5 * {a})) + ig_r"
    lower_ = f"0.5 * math.erfc(-ig_e * math.sqrt(0.5 * {a})) - ig_r"
    value = (f"1.0 - ({upper}) if ig_e > 0.0 else {lower_}" if lower else
             f"{upper} if ig_e > 0.0 else 1.0 - ({lower_})")
    return _let("ig_e", f"math.copysign(math.sqrt(2.0 * abs({t} - math.log1p({t}))), {t})",
                _let("ig_r", tail, value))


def _incomplete(lower: bool) -> str:
    """P (`lower`) or Q of ``a = np.float64(x)`` and ``x = np.float64(y)``."""
    a, x, t = "ig_a", "ig_x", "ig_t"
    series = f"ig_f * ({_series(a, x)})"
    fraction = f"{a} * ig_f * ({_fraction(a, x)})"
    small = f"{a} < {SMALL_A!r} and {x} < {SMALL_X!r}"
    if lower:
        rest = (f"{series} if {x} < {a} + 1.0 else 1.0 - ({_small_a(a, x)}) if {small} "
                f"else 1.0 - {fraction}")
    else:
        rest = (f"{_small_a(a, x)} if {small} else 1.0 - {series} if {x} < {a} + 1.0 "
                f"else {fraction}")
    main = _let(t, f"({x} - {a}) / {a}",
                f"{_temme(a, x, t, lower)} if {a} >= {TEMME_FROM!r} and "
                f"{TEMME_LOW!r} <= {t} <= {TEMME_HIGH!r} else "
                f"{_let('ig_f', _prefactor(a, x, t), rest)}")
    zero, one = ("0.0", "1.0") if lower else ("1.0", "0.0")
    # NaN for NaN, negative a or x, a = x = 0 and a = x = inf (SciPy's)
    return _let_all({a: "np.float64(x)", x: "np.float64(y)"}, (
        f"math.nan if not ({a} >= 0.0 and {x} >= 0.0) or {a} == {x} and "
        f"({a} == 0.0 or {a} == math.inf) else {zero} if {x} == 0.0 or {a} == math.inf "
        f"else {one} if {a} == 0.0 or {x} == math.inf else {main}"))


#: the rows' expressions, written at their first use (`numgrad.ops.Primitive.code`)
GAMMAINC = functools.cache(lambda: _incomplete(True))
GAMMAINCC = functools.cache(lambda: _incomplete(False))


# ---- vector-Jacobian products (of Tensors, by Tensor methods) ------------------------

def _density(a, x):
    """``dP/dx = x**(a - 1) exp(-x) / Gamma(a)``, in logs (1 at x = 0 for a = 1)."""
    log_x = x.where((a != 1) | (x != 0), 1).log()
    return ((a - 1) * log_x - x - a.lgamma()).exp()


def _no_gradient_for_a(name: str, a) -> None:
    if a.requires_grad:
        raise RuntimeError(
            f"{name}(a, x) has no gradient with respect to a (autograd's has none either): "
            f"detach a (a.detach()) to differentiate with respect to x alone")


def gammainc_vjp(g, out, a, x, _):
    _no_gradient_for_a("gammainc", a)
    return None, g * _density(a, x)


def gammaincc_vjp(g, out, a, x, _):
    _no_gradient_for_a("gammaincc", a)
    return None, -g * _density(a, x)
