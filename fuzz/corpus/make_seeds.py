#!/usr/bin/python3
"""Writes the seed corpora of the parser fuzz targets (fuzz/corpus/<target>/): small synthetic
inputs made up here from the format descriptions (docs/formats.md, docs/kafka.md,
docs/instruments.md, docs/config.md), never copied from real data. Re-run after a format change:
  /usr/bin/python3 fuzz/corpus/make_seeds.py
Multi-file inputs are cut into parts at "\\n@@\\n" lines (fuzz/fuzz_files.h)."""
import gzip
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
SEP = "\n@@\n"


def write(target, name, data):
    d = os.path.join(HERE, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# --- lobster_fuzz: message file @@ orderbook file -------------------------------------------
# message: time (s after midnight), type 1..7, order id, size, price (dollars x 10000), direction
# orderbook row k: the book after message k, per level: ask px, ask size, bid px, bid size.
msgs = [
    "34200.004241176,1,16113575,18,5853300,1",
    "34200.025552316,1,16120456,18,5859100,-1",
    "34200.201743107,3,16120456,18,5859100,-1",
    "34200.201781590,4,16113575,10,5853300,1",
    "34200.305314000,2,16113575,3,5853300,1",
    "34201.000000000,5,0,100,5855000,-1",
    "34202.000000000,6,-1,2000,5856000,-1",
    "34203.000000000,7,0,0,-1,-1",
    "34204.000000000,7,0,0,1,-1",
]
books = [
    "5859400,200,5853300,18",
    "5859100,18,5853300,18",
    "5859400,200,5853300,18",
    "5859400,200,5853300,8",
    "5859400,200,5853300,5",
    "5859400,200,5853300,5",
    "5859400,200,5853300,5",
    "5859400,200,5853300,5",
    "5859400,200,5853300,5",
]
write("lobster_fuzz", "one_level", "\n".join(msgs) + "\n" + SEP + "\n".join(books) + "\n")
books2 = [b + ",5860000,100,5850000,300" for b in books]
books2[3] = "5859400,200,5853300,8,5861000,50,5850000,300"  # a level moved up into view: resync
write("lobster_fuzz", "two_levels_resync", "\n".join(msgs) + "\n" + SEP + "\n".join(books2) + "\n")
empty = "9999999999,0,-9999999999,0"
write("lobster_fuzz", "empty_levels", "\n".join(msgs[:3]) + "\n" + SEP + "\n".join([empty, "5859100,18," + "-9999999999,0", empty]) + "\n")
write("lobster_fuzz", "bad_lines",
      "34200.1,1,1,10,5853300,1\n34200.0,1,2,10,5853300,1\nnan,1,3,10,1,1\n34200.2,9,4,10,1,1\n34200.3,1,5,-10,5853300,1\n34200.4,1,6"
      + SEP + "5859400,200,5853300,28\n-5,1,2,3\n5859400,200\n5859400,200,5853300,-1")

# --- sse_fuzz: snapshot.csv @@ entrust.csv @@ trade.csv ---------------------------------------
levels = [f"{w}{i}" for w in ("AskPrice", "AskVolume", "BidPrice", "BidVolume") for i in range(1, 11)]
snap_head = ",".join(["UpdateTime", "SecurityID", "PreCloPrice", "LastPrice", "InstruStatus", "TradVolume", "Turnover", "SeqNo"] + levels)


def snap(t, status, last, vol, turn, seq, asks, bids):
    ap = [str(p) for p, _ in asks] + [""] * (10 - len(asks))
    av = [str(q) for _, q in asks] + [""] * (10 - len(asks))
    bp = [str(p) for p, _ in bids] + [""] * (10 - len(bids))
    bv = [str(q) for _, q in bids] + [""] * (10 - len(bids))
    return ",".join([t, "600519", "1845.75999999999999", last, status, vol, turn, str(seq)] + ap + av + bp + bv)


snapshot = "\n".join([snap_head,
                      snap("09:15:00.000", "OCALL", "0", "0", "0", 1, [(1850.0, 100)], [(1850.0, 100)]),
                      snap("09:30:00.000", "TRADE", "1850.01", "1000", "1850010.0", 2,
                           [(1850.02, 300), (1850.5, 100)], [(1850.0, 200), (1849.9, 50)])]) + "\n"
entrust = "\n".join(["SecurityID,OrderTime,OrderType,OrderNO,OrderPrice,Balance,OrderBSFlag,BizIndex",
                     "600519,09:30:00.010,A,1001,1850.02,100,B,10",
                     "600519,09:30:00.020,A,1002,1851.00,200,S,11",
                     "600519,09:30:00.030,D,1002,,200,S,12"]) + "\n"
trade = "\n".join(["SecurityID,TradTime,TradPrice,TradVolume,TradeBuyNo,TradeSellNo,TradeBSFlag,BizIndex",
                   "600519,09:30:00.010,1850.02,100,1001,900,B,13",
                   "600519,09:30:01.000,1850.00,50,901,1003,S,14"]) + "\n"
write("sse_fuzz", "small_day", snapshot + SEP + entrust + SEP + trade)
write("sse_fuzz", "bom_crlf", ("\ufeff" + snapshot).replace("\n", "\r\n") + SEP + entrust + SEP + trade)
write("sse_fuzz", "empty_trade", snapshot + SEP + entrust + SEP)
write("sse_fuzz", "header_only", snap_head + "\n" + SEP + entrust.splitlines()[0] + "\n" + SEP + trade)
write("sse_fuzz", "bad_rows", snapshot + "09:31:00.000,60051,1,1,TRADE,1,1,3" + SEP
      + entrust + "600519,09:29:00.000,A,1,nan,1,B,1\n600519,25:00:00,A,1,1,1,B,1\n" + SEP + trade + "600519,09:31:00.000,1,0,1,1,N,15")

# --- csv_fuzz: ticksentry's normalized csv --------------------------------------------------
lv = ",".join(["185000,200", "184990,50"] + ["0,0"] * 8) + "," + ",".join(["185002,300", "185050,100"] + ["0,0"] * 8)
write("csv_fuzz", "every_kind",
      "kind,symbol,exch_ts_ns,seq,fields\n"
      f"snapshot,600519.SH,1675214100000000000,1,continuous,185001,184576,1000,1850010.5,{lv},0\n"
      "order_add,600519.SH,1675214100020000000,2,90,174500,50,S\n"
      "order_cancel,600519.SH,1675214100030000000,3,90,174500,50,S\n"
      "order_execute,GOOG,1675214100040000000,4,15818974,57940,4,B\n"
      "trade,GOOG,1675214100113246707,5,57951,1,S,0,0\n"
      "status,GOOG,1675214101000000000,7,halted\n")
write("csv_fuzz", "resync_and_old_snapshot",
      f"snapshot,GOOG,1340285400000000000,0,pre_open,0,57800,0,0,{lv},1\n"
      f"snapshot,GOOG,1340285400000000001,1,opening_auction,0,57800,0,0,{lv}\n")
write("csv_fuzz", "bad_lines",
      "trade,GOOG,1,1,100,1,B,0,0\ntrade,GOOG,0,2,100,1,B,0,0\ntrade,,3,3,1,1,N,0,0\ntrade,GOOG,4,4,nan,1,N,0,0\n"
      "order_add,GOOG,5,5,1,0,1,B\nfrobnicate,GOOG,6,6\nstatus,GOOG,7,7,sleeping\ntrade,GOOG,8,8,100,1,B,0")

# --- line_reader_fuzz: one file, mostly gzip ------------------------------------------------
text = "kind,symbol,exch_ts_ns,seq,fields\ntrade,GOOG,1,1,100,1,B,0,0\nstatus,GOOG,2,2,halted\n"
write("line_reader_fuzz", "plain_bom_crlf", ("\ufeff" + text).replace("\n", "\r\n"))
write("line_reader_fuzz", "plain_unterminated", text + "trade,GOOG,3,3,100")
write("line_reader_fuzz", "gzip_one", gzip.compress(text.encode(), mtime=0))
write("line_reader_fuzz", "gzip_two_members", gzip.compress(text.encode(), mtime=0) + gzip.compress(b"second member\n", mtime=0))
g = gzip.compress((text * 4).encode(), mtime=0)
write("line_reader_fuzz", "gzip_cut", g[: len(g) // 2])
write("line_reader_fuzz", "gzip_trailing_garbage", g + b"garbage after the member\n")
bad = bytearray(gzip.compress(text.encode(), mtime=0))
bad[14] ^= 0xA5
write("line_reader_fuzz", "gzip_corrupt_first_member", bytes(bad) + gzip.compress(b"after\n", mtime=0))
write("line_reader_fuzz", "control_bytes", b"ok\nnul\x00here\ndel\x7f\ntab\tand\rcr\r\n")

# --- wire_fuzz: binary and JSON messages ----------------------------------------------------


def bin_msg(kind, body, symbol=b"GOOG", seq=12, ts=1340285400012000000, prev=57800, flags=0):
    return struct.pack("<2sBBBBHQqq", b"TK", 1, kind, len(symbol), flags, len(body), seq, ts, prev) + body + symbol


trade_body = struct.pack("<qqQQb7x", 57812, 100, 0, 0, 1)
order_body = struct.pack("<Qqqb7x", 15818974, 57940, 4, -1)
status_body = struct.pack("<B7x", 7)
bids = [(57800 - i, 100 + i) for i in range(10)]
asks = [(57801 + i, 100 + i) for i in range(10)]
snap_body = b"".join(struct.pack("<qq", p, q) for p, q in bids) + b"".join(struct.pack("<qq", p, q) for p, q in asks)
snap_body += struct.pack("<qqqdBB6x", 57801, 57800, 1000, 57801000.5, 3, 0)
write("wire_fuzz", "bin_trade", bin_msg(1, trade_body))
write("wire_fuzz", "bin_order_add", bin_msg(2, order_body, symbol=b"600519.SH", flags=1))
write("wire_fuzz", "bin_status", bin_msg(5, status_body))
write("wire_fuzz", "bin_snapshot", bin_msg(0, snap_body))
write("wire_fuzz", "json_trade", '{"v":1,"kind":"trade","symbol":"GOOG","seq":12,"exch_ts_ns":1340285400012000000,'
      '"ref":{"prev_close":57800,"st":false},"price":57812,"qty":100,"aggressor":"B","buy_order_id":0,"sell_order_id":0}')
write("wire_fuzz", "json_order", '{"v":1,"kind":"order_cancel","symbol":"600519.SH","seq":3,"exch_ts_ns":1675214100030000000,'
      '"order_id":90,"price":174500,"qty":50,"side":"S"}')
write("wire_fuzz", "json_status", '{"kind":"status","v":1,"symbol":"GOOG","seq":7,"exch_ts_ns":1340287223000000000,"phase":"halted"}')
write("wire_fuzz", "json_snapshot", '{"v":1,"kind":"snapshot","symbol":"GOOG","seq":0,"exch_ts_ns":1340285400000000000,'
      '"phase":"continuous","bids":[[57800,100],[57799,200]],"asks":[[57801,50]],"last":57801,"prev_close":57700,'
      '"cum_volume":1000,"cum_turnover":578010.25,"resync":1}')

# --- instrument_fuzz: instrument reference csv @@ calendar csv ("fz") ------------------------
write("instrument_fuzz", "rows_and_calendar",
      "symbol,board,currency,tick_size,size_increment,lot_size,limit_pct,st,calendar,time_zone\n"
      "600000.SH,,,,,,,1,,\n510300.SH,sse_main,,0.001,,,10,,,\nAAPL,,USD,0.01,,1,,,fz,America/New_York\n"
      "BINANCE:BTCUSDT,,,0.01,0.00001,,,,crypto,UTC\n"
      + SEP + "# fz: a test calendar\ndate,name\n2026-02-16,Spring Festival\n2026-02-17,Spring Festival\n2026-12-25,Christmas\n")
write("instrument_fuzz", "bad_rows",
      "time_zone,symbol,tick_size\nX,AAPL,0.0x\nAsia/Shanghai,600519.SH,0.01\n,,\n../../etc/passwd,GOOG,1\n"
      + SEP + "date,name\n2026-02-30,bad\n2026-02-16,twice\n2026-02-16,twice\nnot a date,x\n")

# --- config_fuzz: config files (docs/config.md) ---------------------------------------------
write("config_fuzz", "pipeline_and_rules",
      "[pipeline]\nshards = 2\nevent_ring = 65536\nalert_ring = 4096\nspeed = 1.5\n\n"
      "[rules.rapid_rise]\nenabled = true\n\n[rules.large_order]\nmin_volume_z = 3.0\n\n[features]\n\n"
      "[sim]\nsymbols = 10\nseed = 7\nevents_per_s = 2000.0\nanomaly_types = \"all\"\n")
write("config_fuzz", "model_groups",
      "[model]\npath = \"m.onnx\"\nthreshold = 0.9\nhysteresis = 0.05\ncooldown_s = 60\nbackend = \"cpu\"\n"
      "window_rows = 60\n\n[[model.groups]]\nsymbols = [\"600*\", \"GOOG\"]\nthreshold = 0.8\n")
write("config_fuzz", "kafka_passthrough",
      "[kafka.consumer]\n\"fetch.wait.max.ms\" = 10\nsession.timeout.ms = 6000\n\n[kafka.producer]\nlinger.ms = 5\n"
      "compression.type = \"zstd\"\nenable.idempotence = true\n")
write("config_fuzz", "out_of_range",
      "[pipeline]\nevent_ring = -1\nshards = 100000\n[sim]\nsymbols = 4294967297\n[rules.large_order]\nmin_volume_z = nan\n"
      "[http]\nport = 70000\n")
print("seeds written under", HERE)
