-- Wireshark dissector for RIFL link frames (docs/capture.md).
--
-- Reads the raw-Ethernet encapsulation (EtherType 0x88B5) and, through
-- "Decode As", the same datagrams over UDP: the 20-byte "RF" header (magic,
-- version, log2 of the frame width, frame count, epoch, sequence number of
-- the first frame) and then each frame of F bits.  For each frame it shows
-- SYN, the frame ID the verification code gives (CRC-12 of the frame with
-- VCODE taken as zero, XOR VCODE) and whether it verifies: the dissector
-- follows each direction as the link rules' receiver would (its expected ID
-- and delivery threshold, from two frames in sequence on), so a frame
-- verifies when its ID is the one expected, and it marks the frames such a
-- receiver delivers.  After descrambling (1 + x^13 + x^33 over the
-- scrambled regions of one direction, so the frame before must be in the
-- capture): META, the control key, the valid byte count and the format byte.
-- Several datagrams in one UDP payload (segmentation offload on loopback)
-- are each read, and probe datagrams are shown.
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
    verify = ProtoField.bool("rifl.verify", "Verifies (the ID the receiver expects)"),
    expected = ProtoField.uint16("rifl.expected_id", "Expected frame ID"),
    delivered = ProtoField.bool("rifl.delivered", "New to the receiver (delivered)"),
    fid_bits = ProtoField.uint8("rifl.fid_bits", "Frame ID bits (K)"),
    probe_kind = ProtoField.uint8("rifl.probe.kind", "Probe", base.DEC,
                                  { [1] = "question", [2] = "answer",
                                    [3] = "sequence announcement" }),
    probe_token = ProtoField.uint64("rifl.probe.token", "Token (announcement: next sequence number)"),
    probe_value = ProtoField.uint64("rifl.probe.value", "Value (the sender's round-trip estimate)"),
    probe_peer_epoch = ProtoField.uint32("rifl.probe.peer_epoch", "Receiver's epoch as known",
                                         base.HEX),
    probe_prev_epoch = ProtoField.uint32("rifl.probe.prev_epoch", "Sender's epoch before its reset",
                                         base.HEX),
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
                pf.expected, pf.delivered, pf.fid_bits, pf.probe_kind, pf.probe_token,
                pf.probe_value, pf.probe_peer_epoch, pf.probe_prev_epoch,
                pf.descrambled, pf.l2_total, pf.l2_remain, pf.l2_ports, pf.voq_on, pf.voq_off,
                pf.fcp_op, pf.fcp_fctbs, pf.fcp_vl, pf.fcp_fccl, pf.fcp_crc_ok }

local ef = {
    bad_count = ProtoExpert.new("rifl.bad_count.expert",
                                "Byte count of a partial frame outside 1 .. P/8 - 1",
                                expert.group.MALFORMED, expert.severity.ERROR),
    malformed = ProtoExpert.new("rifl.malformed.expert", "Malformed RIFL datagram",
                                expert.group.MALFORMED, expert.severity.ERROR),
}
rifl.experts = { ef.bad_count, ef.malformed }

rifl.prefs.fid_bits = Pref.uint("Frame ID bits (K)", 0,
                                "ID width of the lanes captured; 0: learnt from the " ..
                                "capture, where the IDs wrap")
rifl.prefs.cells = Pref.bool("Packets are Layer 2 cells", false,
                             "Show the Layer 2 header at the start of every packet " ..
                             "(captures of rifl sim switch)")

-- (Lua 5.2 has bit32; Wireshark built with a later Lua gives BitOp as `bit`;
-- every value here is below 2^31, where the two agree)
local B = bit32 or bit
local band, bxor, lshift, rshift = B.band, B.bxor, B.lshift, B.rshift
local HEADER = 20
local CRC_POLY = 0x02F

-- Descrambler state per direction, as a capture is read the first time,
-- and the state each packet started from, for later passes.
local dir_state, pkt_state = {}, {}

function rifl.init()
    dir_state, pkt_state = {}, {}
end

-- A direction's state: the descrambler ring, and the receiver it follows
-- (link rules section 7): the expected ID `exp`, the delivery threshold
-- `thr`, IDs modulo `M` (2^K; 4096 until K is known).
local function new_state()
    local ring = {}
    for i = 0, 32 do ring[i] = 0 end
    local K = rifl.prefs.fid_bits
    local known = K >= 1 and K <= 12
    return { ring = ring, pos = 0, have = 0, next_seq = nil, pkt_start = true,
             synced = false, cand = nil, exp = 0, thr = 0,
             M = known and lshift(1, K) or 4096, kknown = known }
end

local function copy_state(s)
    local t = {}
    for k, v in pairs(s) do t[k] = v end
    t.ring = {}
    for i = 0, 32 do t.ring[i] = s.ring[i] end
    return t
end

-- The receiver on a frame of SYN `syn` and ID `id`: whether it verifies
-- (nil while the receiver is not yet followed), whether it is delivered,
-- and the ID that was expected.
-- Following starts at the second of two frames in sequence (a data frame
-- takes an ID, a control frame carries the next); a run that starts with
-- the reset's frames of ID 0 starts with the threshold at 16.
local function receive(st, syn, id)
    if not st.synced then
        local c = st.cand
        if syn ~= 1 and syn ~= 2 then
            st.cand = nil
            return nil, false
        end
        st.cand = { id = id, inc = syn == 1 and 1 or 0 }
        if not c or id ~= (c.id + c.inc) % st.M then return nil, false end
        st.synced = true
        st.exp = id
        st.thr = (c.id == 0 and c.inc == 0 and id == 0) and 16 or id
    end
    local after_new, e0 = st.prev_new, st.exp
    st.prev_new = false
    if id ~= st.exp then
        -- K unknown: a legal frame of ID 0 right after the delivery of ID
        -- 2^k - 1 is the wrap, K = k
        local e = st.exp
        if not st.kknown and after_new and id == 0 and (syn == 1 or syn == 2) and e >= 32 and
            e < st.M and band(e, e - 1) == 0 then
            st.M, st.kknown, st.exp, st.thr = e, true, 0, st.thr % e
        else
            st.exp = (st.thr - 16) % st.M
            return false, false, e0
        end
    end
    local new = false
    if syn == 1 then
        if st.exp == st.thr then
            new = true
            st.thr = (st.thr + 1) % st.M
        end
        st.exp = (st.exp + 1) % st.M
    end
    st.prev_new = new
    return true, new, e0
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
        if meta ~= 2 then return "data", P, false end
        -- a partial frame's count is 1 .. P/8 - 1; a receiver keeps 0 and
        -- cuts a larger one to P/8 - 1
        local bad = fmt == 0 or fmt >= P
        return "data", math.min(fmt, P - 1), bad
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
local function add_upper(ft, range, kind, d, meta, st, ok, new)
    if kind == "data" then
        -- a followed receiver: only the frames it delivers make its packets
        -- (not replays it skips, nor damaged frames)
        if ok ~= nil and not new then return nil end
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

-- One probe datagram (frame count 0) at `off`: 36 bytes.
local function probe(tvb, off, t)
    t:add(pf.probe_kind, tvb(off + 6, 1))
    t:add(pf.probe_token, tvb(off + 12, 8))
    t:add(pf.probe_value, tvb(off + 20, 8))
    t:add(pf.probe_peer_epoch, tvb(off + 28, 4))
    t:add(pf.probe_prev_epoch, tvb(off + 32, 4))
    local kind = tvb(off + 6, 1):uint()
    return ({ [1] = "probe", [2] = "probe answer", [3] = "announcement" })[kind] or "probe"
end

-- One datagram at `off` (the n-th of its packet): its length, or 0 when
-- what is there is no RIFL datagram.
local function datagram(tvb, off, n, pinfo, tree, summary)
    local len = tvb:len() - off
    if len < HEADER or tvb(off, 1):uint() ~= 0x52 or tvb(off + 1, 1):uint() ~= 0x46 then
        return 0
    end
    local version, log2, count = tvb(off + 2, 1):uint(), tvb(off + 3, 1):uint(), tvb(off + 4, 2):uint()
    if version ~= 1 or log2 < 6 or log2 > 11 or count > 64 then
        local t = tree:add(rifl, tvb(off, HEADER))
        t:add(pf.version, tvb(off + 2, 1))
        t:add_proto_expert_info(ef.malformed, version ~= 1 and "unknown version" or
                                "frame width or count out of range")
        summary[#summary + 1] = "malformed"
        return len
    end
    local F = lshift(1, log2)
    local fb = F / 8
    local P = fb - 2
    local size = count == 0 and HEADER + 16 or HEADER + count * fb
    local t = tree:add(rifl, tvb(off, math.min(size, len)))
    t:add(pf.version, tvb(off + 2, 1))
    t:add(pf.frame_bits, tvb(off + 3, 1), F)
    t:add(pf.count, tvb(off + 4, 2))
    t:add(pf.epoch, tvb(off + 8, 4))
    if len < size then
        t:add_proto_expert_info(ef.malformed, string.format("truncated: %d of %d bytes", len, size))
        summary[#summary + 1] = "truncated"
        return len
    end
    if count == 0 then
        summary[#summary + 1] = probe(tvb, off, t)
        return size
    end
    if tvb(off + 6, 2):uint() ~= 0 then
        t:add_proto_expert_info(ef.malformed, "bytes 6-7 are not zero")
    end
    t:add(pf.seq, tvb(off + 12, 8))
    local seq = tvb(off + 12, 8):uint64()

    -- the state this datagram starts from
    local key = tostring(pinfo.src) .. ">" .. tostring(pinfo.dst) .. "/" .. tvb(off + 8, 4):uint()
    local at = tostring(pinfo.number) .. "/" .. n
    local st
    if not pinfo.visited then
        st = dir_state[key] or new_state()
        if st.next_seq == nil or st.next_seq ~= seq then
            st.have = 0
            -- frames missing before these: the receiver fails on them
            if st.synced and st.next_seq ~= nil and st.next_seq < seq then
                st.exp = (st.thr - 16) % st.M
            end
        end
        pkt_state[at] = copy_state(st)
    else
        st = copy_state(pkt_state[at] or new_state())
    end

    local bytes = tvb:bytes()
    for i = 0, count - 1 do
        local foff = off + HEADER + i * fb
        local range = tvb(foff, fb)
        local bits = frame_bits_of(bytes, foff, fb)
        local syn = field(bits, 1, 2)
        local vcode = field(bits, F - 11, 12)
        local id = bxor(crc12(bits, F), vcode)
        local ok, new, exp = receive(st, syn, id)
        local d, full = descramble(bits, F, st)
        local kind, valid, bad = kind_of(syn, d, P)
        local ft = t:add(pf.frame, range)
        ft:set_text(string.format("Frame %d: %s, ID %d", i, kind, id))
        ft:add(pf.syn, tvb(foff, 1), syn)
        ft:add(pf.kind, range, kind)
        ft:add(pf.descrambled, range, full)
        if syn == 2 then
            local k = field(d, 1, 16)
            ft:add(pf.key, tvb(foff, 3), k)
            local name = ({ [1] = "IDLE", [16] = "PAUSE", [4096] = "RETRANSMIT" })[k]
            summary[#summary + 1] = name or string.format("key 0x%04x", k)
        elseif syn == 1 then
            local meta = field(d, 1, 2)
            ft:add(pf.meta, tvb(foff, 1), meta)
            local vi = ft:add(pf.valid, range, valid)
            if bad and full then vi:add_proto_expert_info(ef.bad_count) end
            ft:add(pf.format, tvb(foff + fb - 3, 2), field(d, 3 + 8 * (P - 1), 8))
            local what = full and add_upper(ft, range, kind, d, meta, st, ok, new)
            summary[#summary + 1] = what or kind
        else
            summary[#summary + 1] = "invalid SYN"
        end
        ft:add(pf.vcode, tvb(foff + fb - 2, 2), vcode)
        ft:add(pf.id, tvb(foff + fb - 2, 2), id)
        if ok ~= nil then
            -- (the ID expected before a wrap that taught K is shown as 2^K)
            ft:add(pf.expected, tvb(foff + fb - 2, 2), exp)
            ft:add(pf.verify, tvb(foff + fb - 2, 2), ok)
            ft:add(pf.delivered, range, new)
            if st.kknown then ft:add(pf.fid_bits, range, math.floor(math.log(st.M, 2) + 0.5)) end
            if not ok then summary[#summary] = summary[#summary] .. " (fails verification)" end
        end
    end

    if not pinfo.visited then
        st.next_seq = seq + count
        dir_state[key] = st
    end
    return size
end

function rifl.dissector(tvb, pinfo, tree)
    local summary, off, n = {}, 0, 0
    -- (a UDP payload may hold several datagrams: segmentation offload)
    while off < tvb:len() do
        local size = datagram(tvb, off, n, pinfo, tree, summary)
        if size == 0 then break end
        off, n = off + size, n + 1
    end
    if n == 0 then return 0 end
    pinfo.cols.protocol = "RIFL"
    pinfo.cols.info = table.concat(summary, ", ")
    return off
end

DissectorTable.get("ethertype"):add(0x88B5, rifl)
DissectorTable.get("udp.port"):add_for_decode_as(rifl)
