"""The CEL libraries upstream OCM registers, evaluated as cel-go evaluates them.

Every expected result below was produced by upstream: OCM's `helpers.NewEnv` + `NewCELSelector`
(cel-go and the k8s.io/apiserver CEL libraries at the versions the conformance module resolves) on
the same ManagedCluster. `None` means upstream refuses the expression (the placement is misconfigured).
"""

import pytest

from placement.scheduler.ocm.cel import CelCompileError, compile_cel_selector
from tests.scheduler.ocm.cel_cluster import CLUSTER, assert_as_upstream, no_scores

UPSTREAM_RESULTS = [
    # semver
    ('semver(managedCluster.metadata.labels.version).isGreaterThan(semver("1.27.0"))', True),
    ('semver("1.0.0-alpha").isLessThan(semver("1.0.0"))', True),
    ('semver("1.0.0-alpha.1").compareTo(semver("1.0.0-alpha.beta")) == -1', True),
    ('semver("1.0.0-2").compareTo(semver("1.0.0-10")) == -1', True),
    ('semver("1.0.0+build").compareTo(semver("1.0.0")) == 0', True),
    ('semver("1.0.0+build") == semver("1.0.0")', True),
    ('semver("1.2.3").major() == 1 && semver("1.2.3").minor() == 2 && semver("1.2.3").patch() == 3', True),
    ('isSemver("01.0.0")', False),
    ('isSemver("1.0")', False),
    ('isSemver("v1.0.0")', False),
    ('isSemver("1.0.0-")', False),
    ('isSemver("1.0.0-01")', False),
    ('isSemver("1.0.0-a..b")', False),
    ('isSemver("1.0.0+")', False),
    ('isSemver("1.0.0-rc.1+build.5")', True),
    ("semver(managedCluster.status.version.kubernetes).major() == 1", False),
    # regex
    ('"abc123def45".find("[0-9]+") == "123"', True),
    ('"abc".find("[0-9]+") == ""', True),
    ('"a1b2c3".findAll("[0-9]") == ["1", "2", "3"]', True),
    ('"a1b2c3".findAll("[0-9]", 2) == ["1", "2"]', True),
    ('"a1b2c3".findAll("[0-9]", 0) == []', True),
    ('"abc".find("[")', None),
    ('"abc".find("(?=a)") == ""', None),
    ('"abc".matches("^a")', True),
    ('managedCluster.metadata.labels.version.matches("^1\\\\.30")', True),
    # lists
    ("[1, 3, 2].max() == 3", True),
    ("[1, 3, 2].min() == 1", True),
    ("[].max() == 1", False),
    ('["b", "a"].min() == "a"', True),
    ("[1, 2, 3].isSorted()", True),
    ("[1.5, 2.5].sum() == 4.0", True),
    ("[1, 2, 3].indexOf(2) == 1", True),
    ("[1, 2, 2].lastIndexOf(2) == 2", True),
    # url
    ('url(managedCluster.metadata.labels.api).getHost() == "api.c1.example.com:6443"', True),
    ('url(managedCluster.metadata.labels.api).getHostname() == "api.c1.example.com"', True),
    ('url(managedCluster.metadata.labels.api).getPort() == "6443"', True),
    ('url(managedCluster.metadata.labels.api).getScheme() == "https"', True),
    ('url(managedCluster.metadata.labels.api).getEscapedPath() == "/v1/x"', True),
    ('url(managedCluster.metadata.labels.api).getQuery() == {"a": ["1", "2"], "b": [" c"]}', True),
    ('url("https://[::1]:80/").getHostname() == "::1"', True),
    ('url("https://[::1]:80/").getPort() == "80"', True),
    ('url("https://example.com").getEscapedPath() == ""', True),
    ('url("https://example.com/a b").getEscapedPath() == "/a%20b"', True),
    ('isURL("https://example.com/x")', True),
    ('isURL("example.com")', False),
    ('isURL("/path/only")', True),
    ('isURL("mailto:me@example.com")', True),
    ('isURL("https://example.com:abc/")', False),
    ('isURL("")', False),
    ('isURL("https://exa mple.com/")', False),
    ('isURL("HTTP://EXAMPLE.com/x#frag")', True),
    ('url("HTTP://EXAMPLE.com/x#frag").getScheme() == "http"', True),
    ('url("HTTP://EXAMPLE.com/x?q=1#frag").getQuery() == {"q": ["1"]}', True),
    # ip
    ("ip(managedCluster.metadata.labels.ip).family() == 4", True),
    ('ip("::1").family() == 6', True),
    ('string(ip("2001:0db8::0001")) == "2001:db8::1"', True),
    ('ip.isCanonical("2001:db8::1")', True),
    ('ip.isCanonical("2001:DB8::1")', False),
    ('ip("127.0.0.1").isLoopback()', True),
    ('ip("0.0.0.0").isUnspecified()', True),
    ('ip("224.0.0.1").isLinkLocalMulticast()', True),
    ('ip("ff02::1").isLinkLocalMulticast()', True),
    ('ip("169.254.1.1").isLinkLocalUnicast()', True),
    ('ip("fe80::1").isLinkLocalUnicast()', True),
    ('ip("10.0.0.1").isGlobalUnicast()', True),
    ('ip("255.255.255.255").isGlobalUnicast()', False),
    ('ip("8.8.8.8").isGlobalUnicast()', True),
    ('ip("10.0.0.1") == ip("10.0.0.1")', True),
    ('ip("10.0.0.1") == ip("10.0.0.2")', False),
    # cidr
    ('cidr("10.0.0.0/8").containsIP(managedCluster.metadata.labels.ip)', True),
    ('cidr("10.0.0.0/8").containsIP(ip("11.0.0.1"))', False),
    ('cidr("10.0.0.0/8").containsIP("::1")', False),
    ('cidr("10.0.0.0/8").containsCIDR("10.1.0.0/16")', True),
    ('cidr("10.0.0.0/8").containsCIDR(cidr("10.0.0.0/8"))', True),
    ('cidr("10.0.0.0/16").containsCIDR("10.0.0.0/8")', False),
    ('cidr("10.1.2.3/8").masked() == cidr("10.0.0.0/8")', True),
    ('string(cidr("10.1.2.3/8")) == "10.1.2.3/8"', True),
    ('string(cidr("10.1.2.3/8").masked()) == "10.0.0.0/8"', True),
    ('cidr("10.1.2.3/8").ip() == ip("10.1.2.3")', True),
    ('cidr("2001:db8::/32").prefixLength() == 32', True),
    ('isCIDR("10.0.0.0/33")', False),
    ('isCIDR("10.0.0.0/08")', False),
    ('isCIDR("10.0.0.0")', False),
    ('isCIDR("::/0")', True),
    # format
    ('format.dns1123Label().validate("abc").hasValue()', False),
    ('format.dns1123Label().validate("ABC").hasValue()', True),
    ('format.dns1123Subdomain().validate("a.b-c.d").hasValue()', False),
    ('format.dns1035Label().validate("1abc").hasValue()', True),
    ('format.qualifiedName().validate("example.com/my_name").hasValue()', False),
    ('format.qualifiedName().validate("/x").hasValue()', True),
    ('format.labelValue().validate("").hasValue()', False),
    ('format.labelValue().validate("-a").hasValue()', True),
    ('format.dns1123LabelPrefix().validate("abc-").hasValue()', False),
    ('format.uri().validate("https://x").hasValue()', False),
    ('format.uuid().validate("123e4567-e89b-12d3-a456-426614174000").hasValue()', False),
    ('format.uuid().validate("123e4567e89b12d3a456426614174000").hasValue()', False),
    ('format.byte().validate("aGVsbG8=").hasValue()', False),
    ('format.byte().validate("aGVsbG8").hasValue()', True),
    ('format.date().validate("2024-02-30").hasValue()', True),
    ('format.date().validate("2024-02-29").hasValue()', False),
    ('format.datetime().validate("2024-02-29T10:00:00Z").hasValue()', False),
    ('format.datetime().validate("2024-02-29T25:00:00Z").hasValue()', True),
    ('format.named("dns1123Label").hasValue()', True),
    ('format.named("nope").hasValue()', False),
    ('format.named("uuid").value().validate("x").value().size() == 1', True),
    # optional
    ("optional.of(1).hasValue()", True),
    ("optional.none().hasValue()", False),
    ("optional.none().orValue(3) == 3", True),
    ("optional.of(2).orValue(3) == 2", True),
    ("optional.none().or(optional.of(4)).value() == 4", True),
    ('optional.ofNonZeroValue("").hasValue()', False),
    ("optional.ofNonZeroValue(0).hasValue()", False),
    ("optional.ofNonZeroValue([1]).hasValue()", True),
    ("optional.none().value() == 1", False),
    # strings
    ('"hello".reverse() == "olleh"', True),
    ('strings.quote("a\\"b\\n") == "\\"a\\\\\\"b\\\\n\\""', True),
    ('"%s-%d".format(["a", 1]) == "a-1"', True),
    ('"abc".charAt(1) == "b"', True),
    ('"a,b,c".split(",", 2) == ["a", "b,c"]', True),
    (
        '"%s|%d|%.2f|%e|%b|%o|%x|%X|%%".format(["a", 42, 3.14159, 1234.5, 5, 8, 255, "hi"])'
        ' == "a|42|3.14|1.234500e+03|101|10|ff|6869|%"',
        True,
    ),
    ('"%s".format([[1, "a", true, 1.5]]) == "[1, a, true, 1.5]"', True),
    ('"%s".format([{"b": 1, "a": 2}]) == "{a: 2, b: 1}"', True),
    ('"%d".format([2.0]) == "2"', True),
    ('"%s".format([null]) == "null"', True),
    ('"%f".format([1]) == "%!f(int64=1)"', False),
    ('"%s %s".format(["a"]) == "a "', None),
    ('"%q".format(["a"]) == "a"', None),
    ('"%.3f".format([2.0/3.0]) == "0.667"', True),
    ('"%s".format([1e21]) == "1000000000000000000000"', True),
    ('"%s".format([0.1]) == "0.1"', True),
    ('"%s".format([duration("90s")]) == "90s"', True),
    ('"%f".format([1]) == "%!f(int64=000001)"', True),
    ('"%.0e".format([-3]) == "%!e(int64=-3)"', True),
    ('"%d".format([true]) == "1"', None),
    ('"%s %s".format(["a", "b", "c"]) == "a b"', None),
    ('"%s %s".format([managedCluster.metadata.name]) == "x"', None),
    ('"%5".format([1]) == "x"', None),
    ('"abc%".format([]) == "x"', None),
    # other
    ('isIP("1.2.3.4")', True),
    ('isIP("01.2.3.4")', False),
    ('isIP("::ffff:1.2.3.4")', False),
    ('isIP("fe80::1%eth0")', False),
    ('isIP("1.2.3")', False),
    ('quantity("1Gi").isGreaterThan(quantity("1Mi"))', True),
    ('quantity("1Gi").compareTo(quantity("1024Mi")) == 0', True),
    ("9223372036854775807 + 1 > 0", False),
]


@pytest.mark.parametrize(("expression", "expected"), UPSTREAM_RESULTS)
def test_library_expressions_evaluate_as_upstream(expression: str, expected: bool | None) -> None:
    assert_as_upstream(expression, expected)


def test_a_constant_invalid_regex_fails_when_the_program_is_built() -> None:
    with pytest.raises(CelCompileError, match="^instantiation failed: Illegal regex") as raised:
        compile_cel_selector(['"abc".find("[")'])
    assert raised.value.stage == "instantiation"


def test_a_regex_built_at_run_time_is_an_evaluation_error() -> None:
    selector = compile_cel_selector(['"abc".find(managedCluster.metadata.labels.env + "[") == ""'])
    assert not selector.matches(CLUSTER, no_scores)
