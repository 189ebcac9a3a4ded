/* Fuzz the MAC address parser of the raw-Ethernet PHY (rifl/phy.h, "Raw
 * Ethernet"): any text is read without a crash; text that reads well is
 * six two-digit hex bytes with one separator throughout, and the bytes
 * written back in that form give the text again (ignoring case). */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rifl/phy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char text[64];
    if (size >= sizeof text)
        size = sizeof text - 1;
    memcpy(text, data, size);
    text[size] = 0;
    uint8_t mac[6];
    if (rifl_eth_mac_parse(text, mac) != RIFL_OK)
        return 0;
    if (strlen(text) != 17 || (text[2] != ':' && text[2] != '-'))
        __builtin_trap();
    char again[18];
    snprintf(again, sizeof again, "%02x%c%02x%c%02x%c%02x%c%02x%c%02x", mac[0], text[2], mac[1],
             text[2], mac[2], text[2], mac[3], text[2], mac[4], text[2], mac[5]);
    for (size_t i = 0; i < 17; i++)
        if (tolower((unsigned char)text[i]) != again[i])
            __builtin_trap();
    return 0;
}
