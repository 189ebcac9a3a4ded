/* One end of a lane over raw Ethernet (rifl/phy.h, "Raw Ethernet";
 * docs/udp.md): an AF_PACKET socket of EtherType 0x88B5 on one interface
 * under the datagram logic of dgram.c.  Each datagram is the payload of one
 * Ethernet frame to the peer's MAC address; frames from anyone else, and
 * this end's own outgoing ones, are dropped and counted; Ethernet's padding
 * of short frames is taken off. */
#define _GNU_SOURCE
#include <errno.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <netinet/in.h>
#include <linux/if_packet.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include "dgram.h"

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif

struct eth {
    struct dgram d;
    int ifindex;
    uint8_t peer[6], local[6];
    struct sockaddr_ll to;        /* the peer, for sendto() */
    uint8_t pad[RIFL_ETH_MIN_PAYLOAD]; /* a short datagram, zero-padded */
};

static bool eth_send(struct dgram *u, const uint8_t *buf, size_t len)
{
    struct eth *e = (struct eth *)u;
    if (len < RIFL_ETH_MIN_PAYLOAD) {
        memset(e->pad, 0, sizeof e->pad);
        memcpy(e->pad, buf, len);
        buf = e->pad;
        len = sizeof e->pad;
    }
    return sendto(u->fd, buf, len, MSG_DONTWAIT, (const struct sockaddr *)&e->to,
                  sizeof e->to) == (ssize_t)len;
}

static unsigned eth_recv(struct dgram *u, uint8_t *const *bufs, size_t cap, size_t *lens,
                         unsigned n)
{
    struct eth *e = (struct eth *)u;
    struct sockaddr_ll from[DGRAM_RX_BATCH];
    unsigned from_len[DGRAM_RX_BATCH];
    unsigned got = dgram_recv_batch(u->fd, bufs, cap, lens, n, from, sizeof from[0], from_len);
    for (unsigned i = 0; i < got; i++) {
        const struct sockaddr_ll *a = &from[i];
        size_t len = lens[i];
        lens[i] = DGRAM_SKIP;
        if (a->sll_pkttype == PACKET_OUTGOING) {
            u->st.rx_own++;
            continue;
        }
        /* (kernels before 4.20 give the address's length up to its 6 bytes,
         * not the whole structure's) */
        if (from_len[i] < offsetof(struct sockaddr_ll, sll_addr) + 6 ||
            a->sll_pkttype != PACKET_HOST ||
            a->sll_halen != 6 || memcmp(a->sll_addr, e->peer, 6) != 0) {
            u->st.rx_not_peer++;
            continue;
        }
        /* Ethernet pads a payload shorter than 46 bytes: take the padding
         * off, up to that minimum and no further */
        size_t claimed = dgram_claimed_bytes(bufs[i], len);
        if (claimed && claimed < len && len <= RIFL_ETH_MIN_PAYLOAD) {
            len = claimed;
            u->st.rx_padded++;
        }
        lens[i] = len;
    }
    return got;
}

static const dgram_io eth_io = { .send = eth_send, .send_segments = NULL, .recv = eth_recv };

static const rifl_phy_ops eth_ops = {
    .name = "eth", .exchange = dgram_exchange, .next_due = dgram_next_due,
    .destroy = dgram_destroy,
};

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int rifl_eth_mac_parse(const char *text, uint8_t mac[6])
{
    if (!text || !mac || strlen(text) != 17)
        return RIFL_ERR_PARSE;
    char sep = text[2];
    if (sep != ':' && sep != '-')
        return RIFL_ERR_PARSE;
    uint8_t m[6];
    for (int i = 0; i < 6; i++) {
        int hi = hexval(text[3 * i]), lo = hexval(text[3 * i + 1]);
        if (hi < 0 || lo < 0 || (i < 5 && text[3 * i + 2] != sep))
            return RIFL_ERR_PARSE;
        m[i] = (uint8_t)(hi << 4 | lo);
    }
    memcpy(mac, m, 6);
    return RIFL_OK;
}

/* The kernel's rule for interface names: 1 to 15 bytes, not "." or "..",
 * no '/', ':' or white space. */
static bool valid_ifname(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n >= IFNAMSIZ || !strcmp(s, ".") || !strcmp(s, ".."))
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '/' || c == ':' || c <= ' ' || c == 0x7f)
            return false;
    }
    return true;
}

int rifl_eth_interface(const char *ifname, uint8_t mac[6], unsigned *mtu, char *msg,
                       size_t msglen)
{
    if (!valid_ifname(ifname)) {
        rifl_msg(msg, msglen, "interface name '%s' is not valid; give a name of 1 to %d "
                 "characters without '/', ':' or spaces, as 'ip link' lists them",
                 ifname ? ifname : "(none)", IFNAMSIZ - 1);
        return RIFL_ERR_CONFIG;
    }
    if (if_nametoindex(ifname) == 0) {
        rifl_msg(msg, msglen, "there is no network interface '%s' here (%s); 'ip link' lists "
                 "the interfaces", ifname, strerror(errno));
        return RIFL_ERR_CONFIG;
    }
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        rifl_msg(msg, msglen, "cannot open a socket to ask about interface '%s': %s", ifname,
                 strerror(errno));
        return RIFL_ERR_IO;
    }
    struct ifreq r;
    memset(&r, 0, sizeof r);
    memcpy(r.ifr_name, ifname, strlen(ifname));
    int rc = RIFL_OK;
    if (mtu) {
        if (ioctl(fd, SIOCGIFMTU, &r) != 0) {
            rifl_msg(msg, msglen, "cannot read the MTU of interface '%s': %s", ifname,
                     strerror(errno));
            rc = RIFL_ERR_IO;
        } else {
            *mtu = r.ifr_mtu > 0 ? (unsigned)r.ifr_mtu : 0;
        }
    }
    if (rc == RIFL_OK && mac) {
        if (ioctl(fd, SIOCGIFHWADDR, &r) != 0) {
            rifl_msg(msg, msglen, "cannot read the MAC address of interface '%s': %s", ifname,
                     strerror(errno));
            rc = RIFL_ERR_IO;
        } else {
            memcpy(mac, r.ifr_hwaddr.sa_data, 6);
        }
    }
    close(fd);
    return rc;
}

int rifl_phy_eth_create(const rifl_phy_eth_config *cfg, rifl_phy **out, char *msg, size_t msglen)
{
    if (!cfg || !out)
        return rifl_null_arg(msg, msglen, "rifl_phy_eth_create", cfg ? "out" : "cfg");
    *out = NULL;
    rifl_phy_udp_config c = { .frame_bits = cfg->frame_bits, .fd = -1,
                              .frames_per_datagram = cfg->frames_per_datagram,
                              .flush_slots = cfg->flush_slots, .epoch = cfg->epoch,
                              .rx_frames = cfg->rx_frames,
                              .rx_every_slots = cfg->rx_every_slots, .loss = cfg->loss,
                              .dup = cfg->dup, .seed = cfg->seed, .ber = cfg->ber };
    int rc = dgram_check(&c, msg, msglen);
    if (rc != RIFL_OK)
        return rc;
    uint8_t peer[6], local[6];
    if (rifl_eth_mac_parse(cfg->peer_mac, peer) != RIFL_OK) {
        rifl_msg(msg, msglen, "peer MAC address '%s' is not six hex bytes; give it as e.g. "
                 "02:00:00:00:00:01 ('ip link' shows an interface's)",
                 cfg->peer_mac ? cfg->peer_mac : "(none)");
        return RIFL_ERR_CONFIG;
    }
    if ((peer[0] & 1) || !(peer[0] | peer[1] | peer[2] | peer[3] | peer[4] | peer[5])) {
        rifl_msg(msg, msglen, "peer MAC address '%s' is a %s address; give the unicast "
                 "address of the peer's interface", cfg->peer_mac,
                 (peer[0] & 1) ? "multicast or broadcast" : "zero");
        return RIFL_ERR_CONFIG;
    }
    unsigned mtu = 0;
    rc = rifl_eth_interface(cfg->ifname, local, &mtu, msg, msglen);
    if (rc != RIFL_OK)
        return rc;
    size_t need = RIFL_UDP_HEADER_BYTES + (size_t)c.frames_per_datagram * (c.frame_bits / 8);
    if (need > mtu) {
        unsigned fit = mtu > RIFL_UDP_HEADER_BYTES
                           ? (mtu - RIFL_UDP_HEADER_BYTES) / (c.frame_bits / 8) : 0;
        if (fit > RIFL_UDP_MAX_FRAMES)
            fit = RIFL_UDP_MAX_FRAMES;
        if (fit)
            rifl_msg(msg, msglen, "a datagram of %u frames of %u bits is %zu bytes, more than "
                     "the MTU of %u bytes of interface '%s'; use at most %u frames per "
                     "datagram, or raise the MTU (ip link set dev %s mtu %zu)",
                     c.frames_per_datagram, c.frame_bits, need, mtu, cfg->ifname, fit,
                     cfg->ifname, need);
        else
            rifl_msg(msg, msglen, "a datagram of one frame of %u bits is %zu bytes, more than "
                     "the MTU of %u bytes of interface '%s'; use narrower frames, or raise "
                     "the MTU", c.frame_bits, RIFL_UDP_HEADER_BYTES + (size_t)c.frame_bits / 8,
                     mtu, cfg->ifname);
        return RIFL_ERR_CONFIG;
    }
    struct dgram *u = NULL;
    rc = dgram_create(&c, &eth_ops, &eth_io, sizeof(struct eth), &u, msg, msglen);
    if (rc != RIFL_OK)
        return rc;
    struct eth *e = (struct eth *)u;
    e->ifindex = (int)if_nametoindex(cfg->ifname);
    memcpy(e->peer, peer, 6);
    memcpy(e->local, local, 6);
    e->to.sll_family = AF_PACKET;
    e->to.sll_protocol = htons(RIFL_ETH_TYPE);
    e->to.sll_ifindex = e->ifindex;
    e->to.sll_halen = 6;
    memcpy(e->to.sll_addr, peer, 6);
    /* protocol 0: nothing arrives before the bind names the interface and
     * the EtherType */
    u->fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (u->fd < 0) {
        if (errno == EPERM || errno == EACCES)
            rifl_msg(msg, msglen, "a raw Ethernet socket needs root or the CAP_NET_RAW "
                     "capability (%s); run as root, or grant it: setcap cap_net_raw+ep "
                     "PROGRAM", strerror(errno));
        else
            rifl_msg(msg, msglen, "cannot open a raw Ethernet (AF_PACKET) socket: %s",
                     strerror(errno));
        dgram_destroy(&u->phy);
        return RIFL_ERR_IO;
    }
    /* this end's own frames never come back (kernels since 4.20; older ones
     * mark them PACKET_OUTGOING, dropped and counted in rx_own) */
    int one = 1;
    (void)setsockopt(u->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one);
    dgram_socket_buffers(u);
    struct sockaddr_ll a;
    memset(&a, 0, sizeof a);
    a.sll_family = AF_PACKET;
    a.sll_protocol = htons(RIFL_ETH_TYPE);
    a.sll_ifindex = e->ifindex;
    if (e->ifindex == 0 || bind(u->fd, (struct sockaddr *)&a, sizeof a) != 0) {
        rifl_msg(msg, msglen, "cannot bind a raw Ethernet socket to interface '%s': %s",
                 cfg->ifname, strerror(errno));
        dgram_destroy(&u->phy);
        return RIFL_ERR_IO;
    }
    *out = &u->phy;
    return RIFL_OK;
}

int rifl_phy_eth_local_mac(const rifl_phy *p, uint8_t mac[6])
{
    if (!p || p->ops != &eth_ops || !mac)
        return RIFL_ERR_INVALID_ARG;
    memcpy(mac, ((const struct eth *)p)->local, 6);
    return RIFL_OK;
}
