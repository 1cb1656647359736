/* gw_netaddr_set_unpaced: a socket whose address is loopback is Reno
 * whatever the host's congestion control, one whose address is elsewhere
 * keeps the host's, and a listening socket given it passes it to the
 * connections it accepts (the sandbox's relay relies on that). */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gw/netaddr.h"

static void congestion(int fd, char cc[16])
{
    socklen_t n = 16;
    memset(cc, 0, 16);
    ck_assert_int_eq(getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, &n), 0);
}

static void assert_reno(int fd)
{
    char cc[16];
    congestion(fd, cc);
    ck_assert_str_eq(cc, "reno");
}

/* A socket for a peer elsewhere (an address only looked at: nothing is
 * sent) keeps the congestion control a new socket has. */
START_TEST(test_elsewhere_kept)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    char before[16], after[16];
    a.sin_addr.s_addr = htonl(0x0A000001); /* 10.0.0.1 */
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(fd, 0);
    congestion(fd, before);
    gw_netaddr_set_unpaced(fd, (struct sockaddr *)&a);
    congestion(fd, after);
    ck_assert_str_eq(after, before);
    close(fd);
}
END_TEST

START_TEST(test_listener_passes_unpaced)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t al = sizeof(a);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(l, 0);
    gw_netaddr_set_unpaced(l, (struct sockaddr *)&a);
    assert_reno(l);
    ck_assert_int_eq(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
    ck_assert_int_eq(listen(l, 1), 0);
    ck_assert_int_eq(getsockname(l, (struct sockaddr *)&a, &al), 0);
    int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(c, 0);
    ck_assert_int_eq(connect(c, (struct sockaddr *)&a, sizeof(a)), 0);
    int s = accept(l, NULL, NULL);
    ck_assert_int_ge(s, 0);
    assert_reno(s);
    close(s);
    close(c);
    close(l);
}
END_TEST

static Suite *netaddr_suite(void)
{
    Suite *s = suite_create("netaddr");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_listener_passes_unpaced);
    tcase_add_test(tc, test_elsewhere_kept);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(netaddr_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
