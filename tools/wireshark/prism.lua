-- Wireshark dissector for PRISM (EtherType 0x88B5), wire format 1.0.
-- It follows docs/wire-format.md on its own, so it doubles as a second,
-- independent reading of the spec: CI checks that it decodes every golden
-- frame with the Rust parser's field values and rejects every malformed
-- frame with the same reason at the same byte.
--
-- The filter name is "prismcoll" (Wireshark already has a "prism" 802.11 header).
-- Use: wireshark -X lua_script:tools/wireshark/prism.lua, or copy this file
-- into ~/.local/lib/wireshark/plugins/.

local bit = bit32
local prism = Proto("prismcoll", "PRISM collective protocol (EtherType 0x88B5)")
local f = prism.fields

local classes = { [1] = "CONTROL", [2] = "DATA", [3] = "RESULT", [4] = "PROGRESS" }
local commands = { [1] = "STAGE", [2] = "COMMIT", [3] = "COMPLETE", [4] = "RELEASE",
                   [5] = "ACK", [6] = "ABORT", [7] = "CAPS_QUERY", [8] = "CAPS_RESPONSE" }
local ack_status = { [0] = "OK", [1] = "INVALID", [2] = "UNSUPPORTED", [3] = "NO_RESOURCES",
                     [4] = "BAD_STATE", [5] = "STALE_GENERATION", [6] = "TXN_CONFLICT", [7] = "INVALID_BINDING" }
local formats = { [1] = "INT8", [2] = "FP16", [3] = "BF16", [4] = "FP32", [5] = "KULISCH" }
local kstates = { [0] = "FINITE", [1] = "POS_ZERO", [2] = "NEG_ZERO", [3] = "POS_INF", [4] = "NEG_INF", [5] = "NAN" }
local policies = { [1] = "FP32_ARRIVAL", [3] = "KULISCH_FIXED" }
local partials = { [0] = "NONE", [1] = "FP32", [2] = "KULISCH", [3] = "AUTO" }
local outputs = { [1] = "INT8", [2] = "FP16", [3] = "BF16", [4] = "FP32", [5] = "KULISCH", [6] = "AUTO" }
local roles = { [1] = "SINGLE", [2] = "LEAF", [3] = "INTERNAL", [4] = "ROOT" }
local semantics = { [1] = "REDUCE", [2] = "ALLREDUCE" }
local peer_kinds = { [1] = "RANK", [2] = "SWITCH" }
local pstatus = { [0] = "ACCEPTED", [1] = "DUPLICATE", [2] = "REJECTED", [3] = "UNKNOWN_OPERATION" }

f.version = ProtoField.uint8("prismcoll.version", "Version", base.HEX)
f.class = ProtoField.uint8("prismcoll.class", "Class", base.DEC, classes)
f.job = ProtoField.uint64("prismcoll.job", "Job ID", base.DEC)
f.group = ProtoField.uint16("prismcoll.group", "Group ID", base.DEC)
f.group_gen = ProtoField.uint16("prismcoll.group_gen", "Group Generation", base.DEC)
f.op = ProtoField.uint16("prismcoll.op", "Operation ID", base.DEC)
f.op_gen = ProtoField.uint32("prismcoll.op_gen", "Operation Generation", base.DEC)
f.src_ep = ProtoField.uint16("prismcoll.src_ep", "Source Endpoint", base.DEC)
f.dst_ep = ProtoField.uint16("prismcoll.dst_ep", "Destination Endpoint", base.DEC)
-- CONTROL
f.txn = ProtoField.uint32("prismcoll.txn", "Transaction ID", base.DEC)
f.command = ProtoField.uint8("prismcoll.command", "Command", base.DEC, commands)
f.status = ProtoField.uint8("prismcoll.status", "Status", base.DEC, ack_status)
f.body_len = ProtoField.uint16("prismcoll.body_len", "Body Length", base.DEC)
f.frag_index = ProtoField.uint8("prismcoll.frag_index", "Fragment Index", base.DEC)
f.frag_count = ProtoField.uint8("prismcoll.frag_count", "Fragment Count", base.DEC)
f.role = ProtoField.uint8("prismcoll.stage.role", "Role", base.DEC, roles)
f.semantics = ProtoField.uint8("prismcoll.stage.semantics", "Semantics", base.DEC, semantics)
f.input_format = ProtoField.uint8("prismcoll.stage.input_format", "Input format", base.DEC, formats)
f.accumulator = ProtoField.uint8("prismcoll.stage.accumulator", "Accumulator policy", base.DEC, policies)
f.partial = ProtoField.uint8("prismcoll.stage.partial", "Partial policy", base.DEC, partials)
f.output = ProtoField.uint8("prismcoll.stage.output", "Output format", base.DEC, outputs)
f.kulisch_width = ProtoField.uint16("prismcoll.stage.kulisch_width", "Kulisch width", base.DEC)
f.vector_len = ProtoField.uint32("prismcoll.stage.vector_len", "Vector length", base.DEC)
f.dest_rank = ProtoField.uint16("prismcoll.stage.dest_rank", "Destination rank", base.DEC)
f.mtu = ProtoField.uint16("prismcoll.stage.mtu", "MTU", base.DEC)
f.terms = ProtoField.uint32("prismcoll.stage.terms", "Original terms", base.DEC)
f.win_el = ProtoField.uint32("prismcoll.stage.window_elements", "Window elements", base.DEC)
f.win_iv = ProtoField.uint16("prismcoll.stage.window_intervals", "Window intervals", base.DEC)
f.replay = ProtoField.uint16("prismcoll.stage.replay_depth", "Replay depth", base.DEC)
f.win_by = ProtoField.uint32("prismcoll.stage.window_bytes", "Window bytes", base.DEC)
f.binding_count = ProtoField.uint16("prismcoll.stage.binding_count", "Binding count", base.DEC)
f.b_dirs = ProtoField.uint8("prismcoll.binding.directions", "Directions", base.HEX)
f.b_kind = ProtoField.uint8("prismcoll.binding.peer_kind", "Peer kind", base.DEC, peer_kinds)
f.b_stream = ProtoField.uint16("prismcoll.binding.stream_id", "Stream ID", base.DEC)
f.b_local = ProtoField.uint16("prismcoll.binding.local_ep", "Local endpoint", base.DEC)
f.b_peer = ProtoField.uint16("prismcoll.binding.peer_ep", "Peer endpoint", base.DEC)
f.b_mac = ProtoField.ether("prismcoll.binding.peer_mac", "Peer MAC")
f.b_port = ProtoField.uint16("prismcoll.binding.port", "Port", base.DEC)
f.b_rank = ProtoField.uint16("prismcoll.binding.rank", "Rank", base.DEC)
f.b_terms = ProtoField.uint16("prismcoll.binding.terms", "Terms", base.DEC)
f.ack_command = ProtoField.uint8("prismcoll.ack.command", "Acknowledged command", base.DEC, commands)
f.ack_detail = ProtoField.uint16("prismcoll.ack.detail", "Detail", base.DEC)
f.c_input = ProtoField.uint8("prismcoll.caps.input_format", "Input format", base.DEC, formats)
f.c_acc = ProtoField.uint8("prismcoll.caps.accumulator", "Accumulator policy", base.DEC, policies)
f.c_partial = ProtoField.uint8("prismcoll.caps.partial", "Partial policy", base.DEC, partials)
f.c_output = ProtoField.uint8("prismcoll.caps.output", "Output format", base.DEC, outputs)
f.c_roles = ProtoField.uint8("prismcoll.caps.roles", "Roles", base.HEX)
f.c_sem = ProtoField.uint8("prismcoll.caps.semantics", "Semantics", base.HEX)
f.c_mtus = ProtoField.uint8("prismcoll.caps.mtus", "MTUs", base.HEX)
f.c_max_vector = ProtoField.uint32("prismcoll.caps.max_vector", "Max vector length", base.DEC)
f.c_max_terms = ProtoField.uint32("prismcoll.caps.max_terms", "Max terms", base.DEC)
f.c_kmin = ProtoField.uint16("prismcoll.caps.kulisch_min", "Kulisch min width", base.DEC)
f.c_kmax = ProtoField.uint16("prismcoll.caps.kulisch_max", "Kulisch max width", base.DEC)
f.c_contrib = ProtoField.uint16("prismcoll.caps.max_contributors", "Max contributors", base.DEC)
f.c_paths = ProtoField.uint16("prismcoll.caps.max_result_paths", "Max result paths", base.DEC)
f.c_win_el = ProtoField.uint32("prismcoll.caps.window_elements", "Window elements", base.DEC)
f.c_win_iv = ProtoField.uint16("prismcoll.caps.window_intervals", "Window intervals", base.DEC)
f.c_replay = ProtoField.uint16("prismcoll.caps.replay_depth", "Replay depth", base.DEC)
f.c_win_by = ProtoField.uint32("prismcoll.caps.window_bytes", "Window bytes", base.DEC)
-- DATA / RESULT
f.packet_id = ProtoField.uint32("prismcoll.packet_id", "Packet ID", base.DEC)
f.first_element = ProtoField.uint32("prismcoll.first_element", "First Element", base.DEC)
f.element_count = ProtoField.uint16("prismcoll.element_count", "Element Count", base.DEC)
f.group_count = ProtoField.uint8("prismcoll.group_count", "Group Count", base.DEC)
f.flags = ProtoField.uint8("prismcoll.flags", "Flags", base.DEC)
f.flag_last = ProtoField.bool("prismcoll.flags.last", "LAST", 8, nil, 0x01)
f.flag_inexact = ProtoField.bool("prismcoll.flags.inexact", "ACCUMULATION_INEXACT", 8, nil, 0x02)
f.stream_id = ProtoField.uint16("prismcoll.stream_id", "Stream ID", base.DEC)
f.g_format = ProtoField.uint8("prismcoll.group.format", "Format", base.DEC, formats)
f.g_width = ProtoField.uint16("prismcoll.group.kulisch_width", "Kulisch width (bits)", base.DEC)
f.g_count = ProtoField.uint16("prismcoll.group.count", "Count", base.DEC)
f.v_int8 = ProtoField.int8("prismcoll.value.int8", "INT8 value", base.DEC)
f.v_bits = ProtoField.uint32("prismcoll.value.bits", "Value bits (FP16/BF16/FP32)", base.DEC)
f.v_fp32 = ProtoField.float("prismcoll.value.fp32", "FP32 value")
f.k_state = ProtoField.uint8("prismcoll.kulisch.state", "Kulisch state", base.DEC, kstates)
f.k_int = ProtoField.bytes("prismcoll.kulisch.integer", "Kulisch integer (LE, units of 2^-149)")
-- PROGRESS
f.committed = ProtoField.uint32("prismcoll.committed", "Committed Element", base.DEC)
f.interval_credits = ProtoField.uint16("prismcoll.interval_credits", "Interval Credits", base.DEC)
f.byte_credits = ProtoField.uint32("prismcoll.byte_credits", "Byte Credits", base.DEC)
f.pstatus = ProtoField.uint8("prismcoll.progress_status", "Status", base.DEC, pstatus)
f.pflags = ProtoField.uint8("prismcoll.progress_flags", "Flags (1 COMPLETE, 2 WINDOW_UPDATE)", base.DEC)
f.hole_count = ProtoField.uint16("prismcoll.hole_count", "Hole Count", base.DEC)
f.hole_first = ProtoField.uint32("prismcoll.hole.first", "Hole first element", base.DEC)
f.hole_count_el = ProtoField.uint32("prismcoll.hole.count", "Hole element count", base.DEC)
-- Rejects
f.reject = ProtoField.string("prismcoll.reject", "Reject reason")
f.reject_offset = ProtoField.uint32("prismcoll.reject_offset", "Reject frame offset", base.DEC)

local ef_malformed = ProtoExpert.new("prismcoll.malformed", "Malformed PRISM frame", expert.group.MALFORMED, expert.severity.ERROR)
prism.experts = { ef_malformed }

local ETH = 14
local value_bytes = { [1] = 1, [2] = 2, [3] = 2, [4] = 4 }

local function identity(t, tree)
  tree:add(f.job, t(2, 8))
  tree:add(f.group, t(10, 2))
  tree:add(f.group_gen, t(12, 2))
  tree:add(f.op, t(14, 2))
  tree:add(f.op_gen, t(16, 4))
end

-- Each class function returns nil when valid, or reason, prism offset.
local function control(t, tree, pinfo)
  identity(t, tree)
  tree:add(f.txn, t(20, 4))
  tree:add(f.src_ep, t(24, 2))
  tree:add(f.dst_ep, t(26, 2))
  tree:add(f.command, t(28, 1))
  tree:add(f.status, t(29, 1))
  tree:add(f.body_len, t(30, 2))
  tree:add(f.frag_index, t(32, 1))
  tree:add(f.frag_count, t(33, 1))
  local cmd, status = t(28, 1):uint(), t(29, 1):uint()
  local fi, fc = t(32, 1):uint(), t(33, 1):uint()
  local body = t:len() - 34
  pinfo.cols.info:append(" " .. (commands[cmd] or "?") .. " txn " .. t(20, 4):uint())
  if commands[cmd] == nil then return "unknown_command", 28 end
  if cmd == 5 then
    if ack_status[status] == nil then return "unknown_status", 29 end
  elseif status ~= 0 then
    return "reserved_nonzero", 29
  end
  local frag_ok
  if cmd == 8 then frag_ok = fc >= 1 and fi < fc else frag_ok = fi == 0 and fc == 1 end
  if not frag_ok then return "bad_fragment", 32 end
  if cmd == 1 then
    if body < 36 then return "bad_body_length", 30 end
    local n = t(34 + 32, 2):uint()
    if body ~= 36 + 20 * n then return "bad_body_length", 30 end
    if t(34 + 34, 2):uint() ~= 0 then return "reserved_nonzero", 68 end
    local c = tree:add(t(34, 36), "Context record")
    c:add(f.role, t(34, 1)); c:add(f.semantics, t(35, 1)); c:add(f.input_format, t(36, 1))
    c:add(f.accumulator, t(37, 1)); c:add(f.partial, t(38, 1)); c:add(f.output, t(39, 1))
    c:add(f.kulisch_width, t(40, 2)); c:add(f.vector_len, t(42, 4)); c:add(f.dest_rank, t(46, 2))
    c:add(f.mtu, t(48, 2)); c:add(f.terms, t(50, 4)); c:add(f.win_el, t(54, 4)); c:add(f.win_iv, t(58, 2))
    c:add(f.replay, t(60, 2)); c:add(f.win_by, t(62, 4)); c:add(f.binding_count, t(66, 2))
    for i = 0, n - 1 do
      local o = 70 + 20 * i
      if bit.band(t(o, 1):uint(), 0xF0) ~= 0 then return "reserved_nonzero", o end
      local b = tree:add(t(o, 20), "Binding " .. i)
      b:add(f.b_dirs, t(o, 1)); b:add(f.b_kind, t(o + 1, 1)); b:add(f.b_stream, t(o + 2, 2))
      b:add(f.b_local, t(o + 4, 2)); b:add(f.b_peer, t(o + 6, 2)); b:add(f.b_mac, t(o + 8, 6))
      b:add(f.b_port, t(o + 14, 2)); b:add(f.b_rank, t(o + 16, 2)); b:add(f.b_terms, t(o + 18, 2))
    end
  elseif cmd == 5 then
    if body ~= 4 then return "bad_body_length", 30 end
    if t(35, 1):uint() ~= 0 then return "reserved_nonzero", 35 end
    tree:add(f.ack_command, t(34, 1))
    tree:add(f.ack_detail, t(36, 2))
    pinfo.cols.info:append(" " .. (ack_status[status] or "?"))
  elseif cmd == 8 then
    if body % 36 ~= 0 then return "bad_body_length", 30 end
    for i = 0, body / 36 - 1 do
      local o = 34 + 36 * i
      if t(o + 7, 1):uint() ~= 0 then return "reserved_nonzero", o + 7 end
      local r = tree:add(t(o, 36), "Capability record " .. i)
      r:add(f.c_input, t(o, 1)); r:add(f.c_acc, t(o + 1, 1)); r:add(f.c_partial, t(o + 2, 1))
      r:add(f.c_output, t(o + 3, 1)); r:add(f.c_roles, t(o + 4, 1)); r:add(f.c_sem, t(o + 5, 1))
      r:add(f.c_mtus, t(o + 6, 1)); r:add(f.c_max_vector, t(o + 8, 4)); r:add(f.c_max_terms, t(o + 12, 4))
      r:add(f.c_kmin, t(o + 16, 2)); r:add(f.c_kmax, t(o + 18, 2)); r:add(f.c_contrib, t(o + 20, 2))
      r:add(f.c_paths, t(o + 22, 2)); r:add(f.c_win_el, t(o + 24, 4)); r:add(f.c_win_iv, t(o + 28, 2))
      r:add(f.c_replay, t(o + 30, 2)); r:add(f.c_win_by, t(o + 32, 4))
    end
  elseif body ~= 0 then
    return "bad_body_length", 30
  end
  return nil
end

local function kulisch_ok(t, o, n)
  local state = t(o, 1):uint()
  local zero = true
  for i = 1, n - 1 do
    if t(o + i, 1):uint() ~= 0 then zero = false; break end
  end
  if state == 0 then return not zero end
  if kstates[state] == nil then return false end
  return zero
end

local function data(t, tree, pinfo)
  identity(t, tree)
  tree:add(f.src_ep, t(20, 2)); tree:add(f.dst_ep, t(22, 2)); tree:add(f.packet_id, t(24, 4))
  tree:add(f.first_element, t(28, 4)); tree:add(f.element_count, t(32, 2)); tree:add(f.group_count, t(34, 1))
  local ft = tree:add(f.flags, t(35, 1))
  ft:add(f.flag_last, t(35, 1)); ft:add(f.flag_inexact, t(35, 1))
  tree:add(f.body_len, t(36, 2)); tree:add(f.stream_id, t(38, 2))
  local first, count, groups, fl = t(28, 4):uint(), t(32, 2):uint(), t(34, 1):uint(), t(35, 1):uint()
  local body_len = t(36, 2):uint()
  pinfo.cols.info:append(string.format(" stream %d pkt %d elems [%d,%d)", t(38, 2):uint(), t(24, 4):uint(), first, first + count))
  if t(40, 2):uint() ~= 0 then return "reserved_nonzero", 40 end
  if bit.band(fl, 0xFC) ~= 0 then return "reserved_nonzero", 35 end
  if bit.band(fl, 2) ~= 0 then
    if bit.band(fl, 1) == 0 or count ~= 0 or groups ~= 0 or body_len ~= 0 then return "inexact_malformed", 35 end
  elseif groups == 0 or count == 0 then
    if count == 0 then return "empty_packet", 32 else return "empty_packet", 34 end
  end
  if first + count > 4294967296 then return "element_range_overflow", 28 end
  local at, stop, seen, elements = 42, t:len(), 0, 0
  while at < stop do
    if seen == groups then return "group_count_mismatch", at end
    if at + 4 > stop then return "group_overrun", at end
    local b0, b1, n = t(at, 1):uint(), t(at + 1, 1):uint(), t(at + 2, 2):uint()
    if bit.band(b0, 0x0E) ~= 0 then return "reserved_nonzero", at end
    local fmt = bit.rshift(b0, 4)
    local wfield = bit.bor(bit.lshift(bit.band(b0, 1), 8), b1)
    local w
    if fmt == 5 then
      local width = (wfield + 1) * 8
      if width < 280 or width > 4096 then return "bad_kulisch_width", at end
      w = 1 + width / 8
    elseif value_bytes[fmt] ~= nil then
      w = value_bytes[fmt]
    else
      return "unknown_format", at
    end
    if fmt ~= 5 and wfield ~= 0 then return "reserved_nonzero", at + 1 end
    if n == 0 then return "empty_group", at + 2 end
    local vlen = n * w
    local pad = (4 - vlen % 4) % 4
    if at + 4 + vlen + pad > stop then return "group_overrun", at end
    for i = 0, pad - 1 do
      if t(at + 4 + vlen + i, 1):uint() ~= 0 then return "padding_nonzero", at + 4 + vlen + i end
    end
    local g = tree:add(t(at, 4 + vlen + pad), "NumberGroup " .. seen .. ": " .. (formats[fmt] or "?") .. " x" .. n)
    g:add(f.g_format, t(at, 1), fmt)
    if fmt == 5 then g:add(f.g_width, t(at, 2), (wfield + 1) * 8) end
    g:add(f.g_count, t(at + 2, 2))
    for i = 0, n - 1 do
      local o = at + 4 + i * w
      if fmt == 1 then
        g:add(f.v_int8, t(o, 1))
      elseif fmt == 5 then
        if not kulisch_ok(t, o, w) then return "bad_kulisch_value", o end
        g:add(f.k_state, t(o, 1))
        g:add(f.k_int, t(o + 1, w - 1))
      else
        g:add(f.v_bits, t(o, w), t(o, w):le_uint())
        if fmt == 4 then g:add_le(f.v_fp32, t(o, 4)) end
      end
    end
    seen = seen + 1
    elements = elements + n
    at = at + 4 + vlen + pad
  end
  if seen ~= groups then return "group_count_mismatch", 34 end
  if elements ~= count then return "element_count_mismatch", 32 end
  return nil
end

local function progress(t, tree, pinfo)
  identity(t, tree)
  tree:add(f.src_ep, t(20, 2)); tree:add(f.dst_ep, t(22, 2)); tree:add(f.stream_id, t(24, 2))
  tree:add(f.packet_id, t(26, 4)); tree:add(f.committed, t(30, 4)); tree:add(f.interval_credits, t(34, 2))
  tree:add(f.byte_credits, t(36, 4)); tree:add(f.pstatus, t(40, 1)); tree:add(f.pflags, t(41, 1))
  tree:add(f.hole_count, t(42, 2))
  pinfo.cols.info:append(string.format(" stream %d committed %d", t(24, 2):uint(), t(30, 4):uint()))
  if t(44, 2):uint() ~= 0 then return "reserved_nonzero", 44 end
  if bit.band(t(41, 1):uint(), 0xFC) ~= 0 then return "reserved_nonzero", 41 end
  if pstatus[t(40, 1):uint()] == nil then return "unknown_status", 40 end
  local floor = t(30, 4):uint()
  for i = 0, t(42, 2):uint() - 1 do
    local o = 46 + 8 * i
    local first, n = t(o, 4):uint(), t(o + 4, 4):uint()
    if n == 0 or first < floor or first + n > 4294967296 then return "bad_holes", o end
    local h = tree:add(t(o, 8), "Hole " .. i)
    h:add(f.hole_first, t(o, 4)); h:add(f.hole_count_el, t(o + 4, 4))
    floor = first + n + 1
  end
  return nil
end

local header_len = { [1] = 34, [2] = 42, [3] = 42, [4] = 46 }

function prism.dissector(tvb, pinfo, tree)
  pinfo.cols.protocol = "PRISM"
  local len = tvb:len()
  local root = tree:add(prism, tvb(), "PRISM")
  local function reject(reason, off)
    root:add(f.reject, reason)
    root:add(f.reject_offset, off + ETH)
    root:add_proto_expert_info(ef_malformed, reason .. " at byte " .. (off + ETH))
    pinfo.cols.info:append(" [malformed: " .. reason .. "]")
    return len
  end
  pinfo.cols.info:set("PRISM")
  if len < 2 then return reject("truncated_header", len) end
  root:add(f.version, tvb(0, 1))
  root:add(f.class, tvb(1, 1))
  local version, class = tvb(0, 1):uint(), tvb(1, 1):uint()
  if bit.rshift(version, 4) ~= 1 then return reject("version_mismatch", 0) end
  if classes[class] == nil then return reject("unknown_class", 1) end
  pinfo.cols.info:append(" " .. classes[class])
  if len < header_len[class] then return reject("truncated_header", len) end
  local declared, len_field
  if class == 1 then
    declared, len_field = 34 + tvb(30, 2):uint(), 30
  elseif class == 4 then
    local holes = tvb(42, 2):uint()
    if holes > 32 then return reject("too_many_holes", 42) end
    declared, len_field = 46 + 8 * holes, 42
  else
    declared, len_field = 42 + tvb(36, 2):uint(), 36
  end
  local exact = len == declared
  local padded = ETH + declared < 60 and len + ETH == 60
  if not (exact or padded) then return reject("body_length_mismatch", len_field) end
  if declared > 9000 then return reject("exceeds_mtu", len_field) end
  local t = tvb(0, declared):tvb()
  local reason, off
  if class == 1 then
    reason, off = control(t, root, pinfo)
  elseif class == 4 then
    reason, off = progress(t, root, pinfo)
  else
    reason, off = data(t, root, pinfo)
  end
  if reason ~= nil then reject(reason, off) end
  return declared
end

DissectorTable.get("ethertype"):add(0x88B5, prism)
