-- Wireshark dissector for RIFL link frames (docs/capture.md).
--
-- Reads the raw-Ethernet encapsulation (EtherType 0x88B5) and, through
-- "Decode As", the same datagrams over UDP: the 20-byte "RF" header (magic,
-- version, log2 of the frame width, frame count, epoch, sequence number of
-- the first frame) and then each frame of F bits.  For each frame it shows
-- SYN, the frame ID the verification code gives (CRC-12 of the frame with
-- VCODE taken as zero, XOR VCODE) and whether that ID is one a lane of K ID
-- bits can expect, and, after descrambling (1 + x^13 + x^33 over the
-- scrambled regions of one direction, so the frame before must be in the
-- capture), META, the control key, the valid byte count and the format byte.
--
-- Use: tshark -X lua_script:rifl.lua -r capture.pcap, or copy this file to
-- ~/.local/lib/wireshark/plugins/.

local rifl = Proto("rifl", "RIFL link frames")

local pf = {
    version = ProtoField.uint8("rifl.version", "Version"),
    frame_bits = ProtoField.uint16("rifl.frame_bits", "Frame width (bits)"),
    count = ProtoField.uint16("rifl.count", "Frames"),
    epoch = ProtoField.uint32("rifl.epoch", "Link epoch", base.HEX),
    seq = ProtoField.uint64("rifl.seq", "Sequence number of the first frame"),
    frame = ProtoField.bytes("rifl.frame", "Frame"),
    syn = ProtoField.uint8("rifl.syn", "SYN", base.DEC,
                           { [0] = "00 (illegal)", [1] = "01 data", [2] = "10 control",
                             [3] = "11 (illegal)" }),
    kind = ProtoField.string("rifl.kind", "Kind"),
    meta = ProtoField.uint8("rifl.meta", "META", base.DEC,
                            { [0] = "00 no user data", [1] = "01 full, packet goes on",
                              [2] = "10 last, partly used", [3] = "11 last, full" }),
    key = ProtoField.uint16("rifl.key", "Control key", base.HEX,
                            { [0x0001] = "IDLE", [0x0010] = "PAUSE", [0x1000] = "RETRANSMIT" }),
    valid = ProtoField.uint16("rifl.valid_bytes", "Valid bytes"),
    format = ProtoField.uint8("rifl.format", "Format byte", base.HEX),
    vcode = ProtoField.uint16("rifl.vcode", "VCODE", base.HEX),
    id = ProtoField.uint16("rifl.id", "Frame ID (CRC-12 XOR VCODE)"),
    verify = ProtoField.bool("rifl.verify", "Frame ID fits K bits"),
    descrambled = ProtoField.bool("rifl.descrambled", "Descrambled (frame before captured)"),
    -- Layer 2 (docs/layer2.md): a cell's header, per-VOQ flow control, credits
    l2_total = ProtoField.uint8("rifl.l2.total_hops", "Total hops"),
    l2_remain = ProtoField.uint8("rifl.l2.remain_hops", "Remaining hops"),
    l2_ports = ProtoField.string("rifl.l2.ports", "Destination ports 1-5"),
    voq_on = ProtoField.int16("rifl.voq.on", "Flow control ON (stop) for queue (-1: none)"),
    voq_off = ProtoField.int16("rifl.voq.off", "Flow control OFF (go on) for queue (-1: none)"),
    fcp_op = ProtoField.uint8("rifl.fcp.op", "FCP Op", base.DEC, { [0] = "normal", [1] = "init" }),
    fcp_fctbs = ProtoField.uint16("rifl.fcp.fctbs", "FCTBS (blocks sent)"),
    fcp_vl = ProtoField.uint8("rifl.fcp.vl", "Virtual lane"),
    fcp_fccl = ProtoField.uint16("rifl.fcp.fccl", "FCCL (credit limit)"),
    fcp_crc_ok = ProtoField.bool("rifl.fcp.lpcrc_ok", "LPCRC checks"),
}
rifl.fields = { pf.version, pf.frame_bits, pf.count, pf.epoch, pf.seq, pf.frame, pf.syn, pf.kind,
                pf.meta, pf.key, pf.valid, pf.format, pf.vcode, pf.id, pf.verify,
                pf.descrambled, pf.l2_total, pf.l2_remain, pf.l2_ports, pf.voq_on, pf.voq_off,
                pf.fcp_op, pf.fcp_fctbs, pf.fcp_vl, pf.fcp_fccl, pf.fcp_crc_ok }

rifl.prefs.fid_bits = Pref.uint("Frame ID bits (K)", 8, "ID width of the lanes captured")
rifl.prefs.cells = Pref.bool("Packets are Layer 2 cells", false,
                             "Show the Layer 2 header at the start of every packet " ..
                             "(captures of rifl sim switch)")

local band, bxor, lshift, rshift = bit32.band, bit32.bxor, bit32.lshift, bit32.rshift
local HEADER = 20
local CRC_POLY = 0x02F

-- Descrambler state per direction, as a capture is read the first time,
-- and the state each packet started from, for later passes.
local dir_state, pkt_state = {}, {}

function rifl.init()
    dir_state, pkt_state = {}, {}
end

local function new_state()
    local ring = {}
    for i = 0, 32 do ring[i] = 0 end
    return { ring = ring, pos = 0, have = 0, next_seq = nil, pkt_start = true }
end

local function copy_state(s)
    local ring = {}
    for i = 0, 32 do ring[i] = s.ring[i] end
    return { ring = ring, pos = s.pos, have = s.have, next_seq = s.next_seq,
             pkt_start = s.pkt_start }
end

-- the frame's bits, bits[1] first sent
local function frame_bits_of(bytes, off, fb)
    local bits = {}
    for i = 0, fb - 1 do
        local v = bytes:get_index(off + i)
        for k = 7, 0, -1 do
            bits[#bits + 1] = band(rshift(v, k), 1)
        end
    end
    return bits
end

local function crc12(bits, F)
    local reg = 0
    for t = 1, F do
        local b = t > F - 12 and 0 or bits[t]
        local fb = bxor(band(rshift(reg, 11), 1), b)
        reg = band(lshift(reg, 1), 0xFFF)
        if fb == 1 then reg = bxor(reg, CRC_POLY) end
    end
    return reg
end

local function field(bits, from, n)
    local v = 0
    for t = from, from + n - 1 do v = v * 2 + bits[t] end
    return v
end

-- descramble the region (bits 3 .. F-12) through the direction's ring
local function descramble(bits, F, st)
    local d = {}
    local ring, pos = st.ring, st.pos
    local full = st.have >= 33
    for t = 3, F - 12 do
        local s = bits[t]
        d[#d + 1] = bxor(s, ring[(pos - 13) % 33], ring[pos])
        ring[pos] = s
        pos = (pos + 1) % 33
    end
    st.pos = pos
    st.have = math.min(33, st.have + F - 14)
    return d, full
end

local function kind_of(syn, d, P)
    if syn == 2 then
        return "control", nil
    elseif syn ~= 1 then
        return "invalid", nil
    end
    local meta = field(d, 1, 2)
    local fmt = field(d, 3 + 8 * (P - 1), 8)
    if meta ~= 0 then
        local valid = (meta == 2) and fmt or P
        return "data", valid
    end
    if fmt == 0 then return "filler", 0 end
    if fmt == 1 then return "fc_on", 0 end
    if fmt == 2 then return "fc_off", 0 end
    if fmt == 3 then return "voq_fc", 0 end
    if fmt == 4 then return "fcp", 0 end
    return "ext", 0
end

-- payload byte k (0 first) of a descrambled frame
local function pbyte(d, k)
    return field(d, 3 + 8 * k, 8)
end

-- the LPCRC of an FCP: CRC-16 0x100B from 0xFFFF over its first 4 bytes
local function lpcrc(b)
    local crc = 0xFFFF
    for i = 1, 4 do
        crc = bxor(crc, lshift(b[i], 8))
        for _ = 1, 8 do
            if band(crc, 0x8000) ~= 0 then
                crc = band(bxor(lshift(crc, 1), 0x100B), 0xFFFF)
            else
                crc = band(lshift(crc, 1), 0xFFFF)
            end
        end
    end
    return crc
end

-- Layer 2 and flow-control contents of a data frame
local function add_upper(ft, range, kind, d, meta, st)
    if kind == "data" then
        if rifl.prefs.cells and st.pkt_start then
            local h = pbyte(d, 0)
            local ports = {}
            for k = 1, 5 do ports[k] = tostring(pbyte(d, k)) end
            ft:add(pf.l2_total, range, rshift(h, 4))
            ft:add(pf.l2_remain, range, band(h, 15))
            ft:add(pf.l2_ports, range, table.concat(ports, ","))
        end
        st.pkt_start = meta == 2 or meta == 3
        return nil
    elseif kind == "voq_fc" then
        local flags, on, off = pbyte(d, 0), pbyte(d, 1), pbyte(d, 2)
        on = band(flags, 0x80) ~= 0 and on or -1
        off = band(flags, 0x40) ~= 0 and off or -1
        ft:add(pf.voq_on, range, on)
        ft:add(pf.voq_off, range, off)
        return string.format("VOQ ON %d OFF %d", on, off)
    elseif kind == "fcp" then
        local b = {}
        for i = 1, 6 do b[i] = pbyte(d, i - 1) end
        local w = ((b[1] * 256 + b[2]) * 256 + b[3]) * 256 + b[4]
        local vl = band(rshift(b[3], 4), 15)
        ft:add(pf.fcp_op, range, rshift(b[1], 4))
        ft:add(pf.fcp_fctbs, range, band(rshift(w, 16), 0xFFF))
        ft:add(pf.fcp_vl, range, vl)
        ft:add(pf.fcp_fccl, range, band(w, 0xFFF))
        ft:add(pf.fcp_crc_ok, range, lpcrc(b) == b[5] * 256 + b[6])
        return string.format("FCP VL %d", vl)
    end
    return nil
end

function rifl.dissector(tvb, pinfo, tree)
    local len = tvb:len()
    if len < HEADER then return 0 end
    if tvb(0, 1):uint() ~= 0x52 or tvb(1, 1):uint() ~= 0x46 then return 0 end
    local log2 = tvb(3, 1):uint()
    local count = tvb(4, 2):uint()
    if log2 < 6 or log2 > 11 or count == 0 or tvb(6, 2):uint() ~= 0 then return 0 end
    local F = 2 ^ log2
    local fb = F / 8
    local P = fb - 2
    if len < HEADER + count * fb then return 0 end
    pinfo.cols.protocol = "RIFL"
    local t = tree:add(rifl, tvb(0, HEADER + count * fb))
    t:add(pf.version, tvb(2, 1))
    t:add(pf.frame_bits, tvb(3, 1), F)
    t:add(pf.count, tvb(4, 2))
    t:add(pf.epoch, tvb(8, 4))
    t:add(pf.seq, tvb(12, 8))
    local seq = tvb(12, 8):uint64()

    -- the descrambler state this packet starts from
    local key = tostring(pinfo.src) .. ">" .. tostring(pinfo.dst) .. "/" .. tvb(8, 4):uint()
    local st
    if not pinfo.visited then
        st = dir_state[key] or new_state()
        if st.next_seq == nil or st.next_seq ~= seq then st.have = 0 end
        pkt_state[pinfo.number] = copy_state(st)
    else
        st = copy_state(pkt_state[pinfo.number] or new_state())
    end

    local K = rifl.prefs.fid_bits
    local bytes = tvb:bytes()
    local summary = {}
    for i = 0, count - 1 do
        local off = HEADER + i * fb
        local bits = frame_bits_of(bytes, off, fb)
        local syn = field(bits, 1, 2)
        local vcode = field(bits, F - 11, 12)
        local id = bxor(crc12(bits, F), vcode)
        local d, full = descramble(bits, F, st)
        local kind, valid = kind_of(syn, d, P)
        local ft = t:add(pf.frame, tvb(off, fb))
        ft:set_text(string.format("Frame %d: %s, ID %d", i, kind, id))
        ft:add(pf.syn, tvb(off, 1), syn)
        ft:add(pf.kind, tvb(off, fb), kind)
        ft:add(pf.descrambled, tvb(off, fb), full)
        if syn == 2 then
            local k = field(d, 1, 16)
            ft:add(pf.key, tvb(off, 3), k)
            local name = ({ [1] = "IDLE", [16] = "PAUSE", [4096] = "RETRANSMIT" })[k]
            summary[#summary + 1] = name or string.format("key 0x%04x", k)
        elseif syn == 1 then
            local meta = field(d, 1, 2)
            ft:add(pf.meta, tvb(off, 1), meta)
            ft:add(pf.valid, tvb(off, fb), valid)
            ft:add(pf.format, tvb(off + fb - 3, 2), field(d, 3 + 8 * (P - 1), 8))
            local what = full and add_upper(ft, tvb(off, fb), kind, d, meta, st)
            summary[#summary + 1] = what or kind
        else
            summary[#summary + 1] = "invalid SYN"
        end
        ft:add(pf.vcode, tvb(off + fb - 2, 2), vcode)
        ft:add(pf.id, tvb(off + fb - 2, 2), id)
        local ok = (syn == 1 or syn == 2) and id < 2 ^ K
        ft:add(pf.verify, tvb(off + fb - 2, 2), ok)
        if not ok then summary[#summary] = summary[#summary] .. " (damaged)" end
    end
    pinfo.cols.info = string.format("seq %s: %s", tostring(seq), table.concat(summary, ", "))

    if not pinfo.visited then
        st.next_seq = seq + count
        dir_state[key] = st
    end
    return HEADER + count * fb
end

DissectorTable.get("ethertype"):add(0x88B5, rifl)
DissectorTable.get("udp.port"):add_for_decode_as(rifl)
