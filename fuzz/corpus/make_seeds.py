#!/usr/bin/python3
"""Writes the seed corpora of the parser fuzz targets (fuzz/corpus/<target>/): small synthetic
inputs made up here from the format descriptions (docs/formats.md, docs/kafka.md,
docs/instruments.md, docs/config.md), never copied from real data. Re-run after a format change:
  /usr/bin/python3 fuzz/corpus/make_seeds.py
Multi-file inputs are cut into parts at "\\n@@\\n" lines (fuzz/fuzz_files.h)."""
import gzip
import os
import struct
import zlib

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
# The shipped example config: every key the docs list, the [rules.*] sections with their
# per-market values (comments stripped, so the mutations land on keys and values).
with open(os.path.join(HERE, "..", "..", "config", "ticksentry.example.toml")) as f:
    write("config_fuzz", "example", "".join(l for l in f if l.strip() and not l.lstrip().startswith("#")))
write("config_fuzz", "out_of_range",
      "[pipeline]\nevent_ring = -1\nshards = 100000\n[sim]\nsymbols = 4294967297\n[rules.large_order]\nmin_volume_z = nan\n"
      "[http]\nport = 70000\n")
# The sections read by the app and the server: [http] (every key, then values out of range),
# [silences], [sinks], [kafka], [instruments] / [calendars], and a [notify] with every receiver
# type, a routing tree, time windows, inhibition and retry.
write("config_fuzz", "http_all_keys",
      "[http]\nenabled = true\nbind = \"0.0.0.0\"\nport = 0\ntoken = \"s3cret\"\nmetrics_token = \"m\"\n"
      "web_root = \"web/dist\"\nmax_connections = 16\nmax_connections_per_client = 1\nlisten_backlog = 65535\n"
      "header_timeout_ms = 100\nbody_timeout_ms = 600000\nidle_timeout_ms = 3600000\nwrite_timeout_ms = 100\n"
      "max_header_bytes = 1024\nmax_body_bytes = 67108864\nworkers = 256\nmax_streams = 1\n")
write("config_fuzz", "http_out_of_range",
      "[http]\nport = -1\nmax_connections = 15\nmax_connections_per_client = 0\nlisten_backlog = 65536\n"
      "header_timeout_ms = 99\nbody_timeout_ms = 1e9\nidle_timeout_ms = \"60s\"\nwrite_timeout_ms = 100.5\n"
      "max_header_bytes = 1048577\nmax_body_bytes = 9223372036854775807\nworkers = nan\nmax_streams = inf\n"
      "enabled = 1\ntoken = 7\n")
write("config_fuzz", "silences_sinks_kafka",
      "[silences]\ndb = \"\"\n[[silences.declared]]\nmatchers = [\"symbol=600519.SH\", \"type=large_trade\"]\n"
      "comment = \"block trades\"\nauthor = \"ops\"\nstarts = \"2026-12-01T09:30:00+08:00\"\n"
      "ends = \"2026-12-31T15:00:00+08:00\"\n[[silences.declared]]\nmatchers = ['severity=~\"info|warning\"']\n"
      "comment = \"quiet\"\n\n[sinks]\nstdout = false\nappend = true\naudit_backend = \"postgres\"\n"
      "postgres_dsn = \"host=127.0.0.1 dbname=ts\"\naudit_db = \"a.db\"\njsonl = \"alerts.jsonl\"\n\n"
      "[kafka]\nbrokers = \"127.0.0.1:9092\"\ntopic = \"ticks\"\ngroup = \"g\"\ndlq_topic = \"dlq\"\n"
      "encoding = \"binance-json\"\neof_idle_ms = 3600000\nalerts_topic = \"alerts\"\n"
      "[kafka.consumer]\n\"auto.offset.reset\" = \"earliest\"\n")
write("config_fuzz", "markets",
      "[instruments]\ndefault_market = \"us\"\ncrypto_venue = \"binance\"\n[calendars]\n")
write("config_fuzz", "silences_bad",
      "[silences]\n[[silences.declared]]\nmatchers = [\"symbol=A\"]\ncomment = \"c\"\nstarts = \"yesterday\"\n"
      "[[silences.declared]]\nmatchers = []\ncomment = \"\"\n")
write("config_fuzz", "notify_tree",
      "[notify]\noutbox_db = \"o.db\"\noutbox_sync_full = true\nqueue_capacity = 16\ntime_source = \"wall\"\n"
      "drain_ms = 0\n[notify.retry]\ninitial_backoff_ms = 10\nmax_backoff_ms = 1000\nmultiplier = 2.0\n"
      "jitter = 0.5\ngive_up_after_ms = 60000\n"
      "[[notify.receivers]]\nname = \"desk\"\ntype = \"slack\"\nurl = \"http://127.0.0.1:1/slack\"\n"
      "title = \"[{{status}}] {{count}} {{group}}\"\ntext = \"{{alerts}}\"\nmax_alerts = 5\nrate_per_s = 1\nburst = 2\n"
      "headers = [\"Authorization: Bearer x\"]\nretry = { jitter = 0.1 }\n"
      "[[notify.receivers]]\nname = \"ding\"\ntype = \"dingtalk\"\nurl = \"https://127.0.0.1:1/d\"\nsecret = \"k\"\n"
      "[[notify.receivers]]\nname = \"mail\"\ntype = \"email\"\nurl = \"smtp://127.0.0.1:25\"\nto = [\"a@b.c\"]\n"
      "from = \"t@b.c\"\nstarttls = \"required\"\ntls_verify = false\n"
      "[[notify.receivers]]\nname = \"sms\"\ntype = \"sms\"\nurl = \"http://127.0.0.1:1/sms\"\nto = [\"+100\"]\n"
      "body = '{\"to\":\"{{to}}\",\"text\":\"{{text}}\"}'\ncontent_type = \"application/json\"\n"
      "[notify.route]\nreceiver = \"desk\"\ngroup_by = [\"market\", \"type\"]\ngroup_wait_ms = 50\n"
      "[[notify.route.routes]]\nmatchers = ['severity=\"critical\"', 'symbol=~\"60.*\"']\nreceiver = \"ding\"\n"
      "continue = true\nactive_time_windows = [\"sh\"]\nmute_time_windows = [\"lunch\"]\n"
      "  [[notify.route.routes.routes]]\n  matchers = ['market!=\"US\"']\n  receiver = \"mail\"\n"
      "[[notify.time_windows]]\nname = \"sh\"\ntime_zone = \"Asia/Shanghai\"\nweekdays = [\"mon\", \"fri\"]\n"
      "times = [\"09:30-11:30\", \"13:00-15:00\"]\nexclude_dates = [\"2026-10-01\"]\n"
      "[[notify.time_windows]]\nname = \"lunch\"\nutc_offset_minutes = 480\ntimes = [\"11:30-13:00\"]\n"
      "[[notify.inhibit_rules]]\nsource_matchers = ['type=\"limit_up_sealed\"']\n"
      "target_matchers = ['type=\"rapid_rise\"']\nequal = [\"symbol\"]\n")
# --- szse_l2_fuzz: tick.csv (SZSE ten-level snapshots, rows grouped by security) ----------------
szse_lv = [f"{w}{i}" for w in ("BuyPrice", "BuyOrderQty", "SellPrice", "SellOrderQty") for i in range(1, 11)]
szse_head = ",".join(["MDDate", "MDTime", "SecurityID", "PreClosePx", "LastPx", "TotalVolumeTrade", "TotalValueTrade",
                      "TradingPhaseCode", "MaxPx", "MinPx", "OpenPx"] + szse_lv + ["BuyNumOrders1"])


def szse_row(t, sym, pre, last, vol, val, phase, bids, asks, date="2022.06.01"):
    cols = [str(p) for p, _ in bids] + [""] * (10 - len(bids))
    cols += [str(q) for _, q in bids] + [""] * (10 - len(bids))
    cols += [str(p) for p, _ in asks] + [""] * (10 - len(asks))
    cols += [str(q) for _, q in asks] + [""] * (10 - len(asks))
    lim_up, lim_dn = round(pre * 1.1, 2), round(pre * 0.9, 2)
    return ",".join([date, t, sym, str(pre), str(last), str(vol), str(val), phase, str(lim_up), str(lim_dn), str(last)] + cols + ["3"])


szse_rows = [szse_row("09:15:03.000", "000400.SZ", 19.38, 0, 0, 0, "1", [(19.40, 100)], [(19.40, 100)]),
             szse_row("09:30:03.000", "000400.SZ", 19.38, 19.41, 1200, 23292.0, "3", [(19.40, 300), (19.39, 50)], [(19.41, 200), (19.45, 10)]),
             szse_row("11:30:00.000", "000400.SZ", 19.38, 19.41, 1500, 29115.0, "4", [(19.40, 300)], [(19.41, 200)]),
             szse_row("09:25:00.000", "300918.SZ", 8.18, 8.20, 800, 6560.0, "2", [(8.19, 100)], [(8.20, 400)]),
             szse_row("14:57:00.000", "300918.SZ", 8.18, 8.25, 900, 7385.0, "5", [(8.25, 10)], [(8.24, 20)])]
write("szse_l2_fuzz", "two_symbols", szse_head + "\n" + "\n".join(szse_rows) + "\n")
write("szse_l2_fuzz", "bad_rows", szse_head + "\n" + "\n".join([
    szse_row("09:30:03.000", "000400", 19.38, 1, 1, 1, "3", [], []),             # not NNNNNN.SZ
    szse_row("09:30:03.000", "000400.SZ", -1, 1, 1, 1, "3", [], []),             # PreClosePx <= 0
    szse_row("09:30:04.000", "000400.SZ", 19.38, 19.4, 10, 1, "3", [(19.5, 1)], [(19.4, 1)]),  # crossed
    szse_row("09:30:05.000", "000400.SZ", 19.38, 19.4, 5, 1, "3", [], []),       # volume going down
    szse_row("09:30:01.000", "000400.SZ", 19.38, 19.4, 20, 1, "3", [], []),      # time going back
    szse_row("25:30:01.000", "000400.SZ", 19.38, 19.4, 20, 1, "X", [], [], date="2022.13.40"),
    "2022.06.01,09:30:07.000,000400.SZ"]) + "\n")
write("szse_l2_fuzz", "header_only_crlf", ("\ufeff" + szse_head + "\n").replace("\n", "\r\n"))

# --- szse_trades_fuzz: tradeData.csv (SZSE fills and cancels, SSE rows of the same file) --------
szse_trade_head = "ChannelNo,ApplSeqNum,BidApplSeqNum,OfferApplSeqNum,SecurityID,TradePrice,TradeQty,ExecType,TradeTime,TradeBSFlag,Market"
write("szse_trades_fuzz", "fills_cancels_and_sse", "\n".join([
    szse_trade_head,
    "2011,100,90,95,000001,13.52,500,F,2023.02.01T09:25:00.320,,SZ",
    "2011,101,96,0,000001,0,300,4,2023.02.01T09:30:00.010,,SZ",
    "2011,102,97,99,000001,13.53,100,F,2023.02.01T09:30:00.020,,SZ",
    "2011,103,0,98,000001,0,200,4,2023.02.01T09:30:01.000,,SZ",
    "2011,104,104,98,000001,13.51,100,F,2023.02.01T14:57:30.000,,SZ",
    "6,1,10,11,600519,1850.01,100,,2023.02.01T09:30:00.050,B,SH",
    "6,2,12,13,600519,1850.00,50,,2023.02.01T09:30:00.060,S,SH",
    "6,3,14,15,600519,1850.00,50,,2023.02.01T09:30:00.070,N,SH"]) + "\n")
write("szse_trades_fuzz", "bad_rows", "\n".join([
    szse_trade_head,
    "2011,100,90,95,00001,13.52,500,F,2023.02.01T09:25:00.320,,SZ",   # symbol
    "2011,101,90,95,000001,0,500,F,2023.02.01T09:25:00.330,,SZ",      # fill price 0
    "2011,102,90,0,000001,13.5,500,F,2023.02.01T09:25:00.340,,SZ",    # fill without both orders
    "2011,103,90,95,000001,1,300,4,2023.02.01T09:30:00.010,,SZ",      # cancel price != 0
    "2011,103,90,95,000001,13.5,1,F,2023.02.01T09:30:00.020,,SZ",     # repeated ApplSeqNum
    "2011,104,90,95,000001,13.5,-1,F,2023.02.01T09:30:00.030,,SZ",    # qty
    "2011,105,90,95,000001,13.5,1,X,2023.02.01T09:30:00.040,,SZ",     # ExecType
    "2011,106,90,95,000001,13.5,1,F,2023.02.01T09:29:00.000,,SZ",     # time going back
    "6,1,10,11,600519,1850.01,100,,2023.02.01T09:30:00.050,Q,SH",     # TradeBSFlag
    "2011,107,90,95,000001,13.5,1,F,2023-02-01 09:30:00,,SZ",
    "2011,108"]))

# --- sse_l3_fuzz: SHorders.csv @@ SHtrans.csv ---------------------------------------------------
l3_orders = "\n".join([
    "MDDate,MDTime,SecurityID,ChannelNo,ApplSeqNum,OrderPrice,OrderQty,OrderBSFlag,OrderType,OrderNO,OrderIndex",
    "2023.07.11,09:15:00.280,605580.SH,1,10,25.50,100,1,2,5001,1",
    "2023.07.11,09:15:00.300,605580.SH,1,11,25.60,200,2,2,5002,2",
    "2023.07.11,09:30:00.010,605580.SH,1,14,25.55,300,1,2,5003,3",
    "2023.07.11,09:30:00.020,605580.SH,1,15,25.55,100,1,10,5003,4",
    "2023.07.11,09:30:00.030,600000.SH,2,3,7.10,1000,2,2,7001,1"]) + "\n"
l3_trades = "\n".join([
    "MDDate,MDTime,SecurityID,ChannelNo,ApplSeqNum,TradePrice,TradeQty,TradeBSFlag,TradeBuyNo,TradeSellNo",
    "2023.07.11,09:25:00.000,605580.SH,1,12,25.55,100,0,5001,5002",
    "2023.07.11,09:30:00.015,605580.SH,1,13,25.60,100,1,5003,5002",
    "2023.07.11,09:30:00.040,600000.SH,2,4,7.10,500,2,7002,7001"]) + "\n"
write("sse_l3_fuzz", "two_symbols", l3_orders + SEP + l3_trades)
write("sse_l3_fuzz", "bad_rows", l3_orders + "2023.07.11,09:31:00.000,605580.SH,1,16,0,100,1,2,5004\n"
      "2023.07.11,09:31:00.000,605580.SH,1,16,25.5,100,1,2,5005\n2023.07.11,09:31:00.000,605580.SH,1,17,25.5,100,3,2,5006\n"
      "2023.07.11,09:31:00.000,605580.SH,1,18,25.5,100,1,7,5007\n2023.07.11,09:29:00.000,605580.SH,1,19,25.5,100,1,2,5008\n"
      "2023.07.11,09:31:00.000,60558.SH,1,20,25.5,100,1,2,5009\n"
      + SEP + l3_trades + "2023.07.11,09:31:00.000,605580.SH,1,30,25.5,0,1,5001,5002\n2023.07.11,9:31,605580.SH,1,31,x,1,1,1,1")
write("sse_l3_fuzz", "cancel_unknown_order", l3_orders.splitlines()[0] + "\n"
      "2023.07.11,09:30:00.020,605580.SH,1,15,25.55,100,1,10,9999\n" + SEP + l3_trades.splitlines()[0] + "\n")

# --- crypto_fuzz: venue byte (0 binance, 1 coinbase, 2 kraken, 3 bitstamp, 4 bitstamp-l3), then
# the websocket capture @@ the REST capture, one message per line (capture_line.h forms) -------


def kraken_checksum(asks, bids):
    def digits(s):
        return s.replace(".", "").lstrip("0")
    text = "".join(digits(p) + digits(q) for p, q in asks[:10]) + "".join(digits(p) + digits(q) for p, q in bids[:10])
    return zlib.crc32(text.encode()) & 0xFFFFFFFF


def binance_diff(first, last, bids, asks):
    return ('{"stream":"nknusdt@depth@100ms","data":{"e":"depthUpdate","E":1633998512568,"s":"NKNUSDT","U":%d,"u":%d,'
            '"b":%s,"a":%s}}' % (first, last, bids, asks))


ns = 1633998512568000000
binance_ws = "\n".join([
    "wss://stream.binance.com:9443/stream <-> 1633998512.5",
    f"{ns} " + binance_diff(95, 100, '[["0.35210000","1.00000000"]]', "[]"),
    f"{ns + 10**8} " + binance_diff(101, 102, '[["0.35220000","5.00000000"]]', '[["0.35260000","0"]]'),
    f"{ns + 2 * 10**8} " + '{"stream":"nknusdt@bookTicker","data":{"u":102,"s":"NKNUSDT","b":"0.35220000","B":"5.00000000","a":"0.35270000","A":"10.00000000"}}',
    f"{ns + 3 * 10**8} " + binance_diff(105, 106, '[["0.35230000","5.00000000"]]', "[]"),
    f"{ns + 4 * 10**8} " + '{"stream":"nknusdt@aggTrade","data":{"e":"aggTrade","E":1633998523963,"s":"NKNUSDT","a":15683430,"p":"0.35280000","q":"58.00000000","f":1,"l":1,"T":1633998523963,"m":false,"M":true}}',
    f"{ns + 5 * 10**8} " + '{"result":null,"id":1}'])
binance_rest = ("https://api.binance.com/api/v3/depth?symbol=NKNUSDT&limit=1000 -> 1633998512.6: "
                '{"lastUpdateId":100,"bids":[["0.35210000","672.00000000"],["0.35200000","1144.00000000"]],'
                '"asks":[["0.35260000","3199.00000000"],["0.35270000","10.00000000"]]}')
write("crypto_fuzz", "binance", b"\x00" + (binance_ws + SEP + binance_rest + "\n").encode())
coinbase_ws = "\n".join([
    '1618677817.1: {"type":"l2update","product_id":"BTC-USD","changes":[["buy","100.01","1"]],"time":"2021-04-17T16:43:37.075687Z"}',
    '1618677817.2: {"type":"snapshot","product_id":"BTC-USD","bids":[["100.00","1.5"]],"asks":[["100.05","2"]]}',
    '1618677817.3: {"type":"l2update","product_id":"BTC-USD","changes":[["sell","100.03","0.25"]],"time":"2021-04-17T16:43:37.075687Z"}',
    '1618677818.0: {"type":"match","trade_id":1,"side":"sell","size":"0.5","price":"100.03","product_id":"BTC-USD","sequence":5,"time":"2021-04-17T16:43:38Z"}',
    '1618677818.1: {"type":"ticker","product_id":"BTC-USD","price":"100.03"}',
    'wss://ws-feed.pro.coinbase.com <- 1618677817.0: {"type":"subscribe"}'])
write("crypto_fuzz", "coinbase", b"\x01" + (coinbase_ws + SEP).encode())
k_asks = [("0.000022900", "13355.87450757"), ("0.000022910", "15.00000000")]
k_bids = [("0.000022800", "100.00000000"), ("0.000022700", "7.50000000")]
k_bids2 = [("0.000022850", "2.00000000")] + k_bids
kraken_ws = "\n".join([
    '1618678123.5: [1360,{"as":[["0.000022900","13355.87450757","1618678123.481570"],["0.000022910","15.00000000","1618678132.136369"]],'
    '"bs":[["0.000022800","100.00000000","1618678123.1"],["0.000022700","7.50000000","1618678123.2"]]},"book-1000","ADA/XBT"]',
    '1618678135.5: [1360,{"b":[["0.000022850","2.00000000","1618678135.0"]],"c":"%d"},"book-1000","ADA/XBT"]' % kraken_checksum(k_asks, k_bids2),
    '1618678136.5: [1360,{"a":[["0.000022900","0.00000000","1618678136.0"]],"c":"12345"},"book-1000","ADA/XBT"]',
    '1618678137.5: [1361,[["0.000022900","10.00000000","1618678137.1","b","l",""]],"trade","ADA/XBT"]',
    '1618678138.0: {"event":"heartbeat"}'])
write("crypto_fuzz", "kraken", b"\x02" + (kraken_ws + SEP).encode())
bitstamp_ws = "\n".join([
    '1000000000000000000 {"data":{"timestamp":"1","microtimestamp":"1000","bids":[["3800.00","1.0"]],"asks":[]},"channel":"diff_order_book_ethusd","event":"data"}',
    '3000000000000000000 {"data":{"timestamp":"1","microtimestamp":"3000","bids":[["3801.00","2.0"]],"asks":[["3806.00","0.5"]]},"channel":"diff_order_book_ethusd","event":"data"}',
    '3000000000000000001 {"data":{"id":1,"amount":0.5,"price":3801.0,"type":0,"microtimestamp":"3001"},"channel":"live_trades_ethusd","event":"trade"}',
    '3000000000000000002 {"event":"bts:subscription_succeeded","channel":"live_trades_ethusd","data":{}}'])
bitstamp_rest = ('https://www.bitstamp.net/api/v2/order_book/ethusd -> 2000000000: '
                 '{"timestamp":"1","microtimestamp":"2000","bids":[["3799.00","1.0"]],"asks":[["3805.00","1.0"]]}')
write("crypto_fuzz", "bitstamp", b"\x03" + (bitstamp_ws + SEP + bitstamp_rest + "\n").encode())
l3 = "\n".join([
    '1430445494000 order_created {"price": "236.22", "amount": "3.70240000", "datetime": "1430445494", "id": 85, "order_type": 0}',
    '1430445496000 order_created {"price": "236.50", "amount": "7.34933031", "datetime": "1430445496", "id": 93, "order_type": 1}',
    '1430445496100 order_changed {"price": "236.22", "amount": "7.34933031", "datetime": "1430445496", "id": 93, "order_type": 1}',
    '1430445498814 trade {"price": 236.22, "amount": 3.7023999999999999, "id": 8111381}',
    '1430445498815 order_deleted {"price": "236.22", "amount": "0.00000000", "datetime": "1430445494", "id": 85, "order_type": 0}',
    '1430445499000 order_deleted {"price": "236.10", "amount": "1.00000000", "datetime": "1430445499", "id": 95, "order_type": 0}'])
write("crypto_fuzz", "bitstamp_l3", b"\x04" + (l3 + SEP).encode())
write("crypto_fuzz", "bad_lines", b"\x00" + b'{"stream":\nnot json at all\n123 {"a":1}\n' + binance_diff(1, 2, '[["abc","1"]]', "[]").encode()
      + b"\n" + binance_diff(3, 4, '[["0.1","1e400"]]', '[["-1","1"]]').encode())

# --- mapped_fuzz: layout TOML @@ its files in [[file]] order --------------------------------------
layouts = os.path.join(HERE, "..", "..", "config", "layouts")
with open(os.path.join(layouts, "sse-l2.toml")) as f:
    sse_layout = f.read()
with open(os.path.join(layouts, "szse-l2.toml")) as f:
    szse_layout = f.read()
write("mapped_fuzz", "sse_l2_layout", sse_layout + SEP + snapshot + SEP + entrust + SEP + trade)
write("mapped_fuzz", "szse_l2_layout", szse_layout + SEP + szse_head + "\n" + "\n".join(szse_rows) + "\n")
write("mapped_fuzz", "combined_epoch_layout", """[layout]
name = "fz-combined"
time_zone = "America/New_York"
merge = "time_then_seq"

[[file]]
role = "combined"
name = "flow"
price_scale = 100
size_scale = 100
time = { column = "ts", format = "epoch_ms" }
symbol = { column = "code", digits = 6, suffix = ".SZ" }
seq = "n"
order_id = "oid"
price = "px"
size = "qty"
buy_order_id = "bid"
sell_order_id = "ask"
kind = { column = "k", codes = { "A" = "add", "D" = "cancel", "E" = "execute", "T" = "trade", "H" = "skip" } }
side = { column = "s", codes = { "B" = "buy", "S" = "sell" } }
aggressor = { column = "s", codes = { "B" = "buy", "S" = "sell" } }
""" + SEP + "ts,code,n,oid,px,qty,bid,ask,k,s\n1675214100000,000001,1,7,13.52,5,0,0,A,B\n1675214100001,000001,2,8,13.53,5,0,0,A,S\n"
      "1675214100002,000001,3,0,13.53,5,7,8,T,B\n1675214100003,000001,4,7,13.52,5,0,0,D,B\n1675214100004,0001,5,0,1,1,0,0,H,\n")
write("mapped_fuzz", "bad_layout", '[layout]\nname = "x"\ntime_zone = "Mars/Olympus"\nmerge = "random"\n[[file]]\nrole = "order"\n'
      'name = ""\nprice_scale = -1\ntime = { column = "t", format = "hh:mm" }\nlevels = 99\n' + SEP + "t\n1\n")

# --- ws_fuzz: venue byte, then REST snapshot URL @@ its body @@ the server's bytes after its 101
# (websocket frames, RFC 6455 §5.2; a server's frames are not masked) ------------------------------


def ws_frame(payload, opcode=1, fin=True, mask=None, rsv=0, length=None):
    if isinstance(payload, str):
        payload = payload.encode()
    n = len(payload) if length is None else length
    head = bytes([(0x80 if fin else 0) | (rsv << 4) | opcode])
    m = 0x80 if mask else 0
    if n < 126 and length is None:
        head += bytes([m | n])
    elif n < 65536 and length is None:
        head += bytes([m | 126]) + struct.pack(">H", n)
    else:
        head += bytes([m | 127]) + struct.pack(">Q", n)
    if mask:
        head += mask
        payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return head + payload


def ws_close(code=None, reason=b""):
    return ws_frame(b"" if code is None else struct.pack(">H", code) + reason, opcode=8)


def ws_seed(name, venue, frames, url="", body=""):
    write("ws_fuzz", name, bytes([venue]) + url.encode() + SEP.encode() + body.encode() + SEP.encode() + b"".join(frames))


def json_of(capture_line):  # a capture line's message, without its receive-time prefix
    return capture_line.split(" ", 1)[1] if capture_line[0].isdigit() and not capture_line.split(" ", 1)[0].endswith(":") \
        else capture_line.split(": ", 1)[1]


b_msgs = [json_of(l) for l in binance_ws.split("\n")[1:]]
b_url, b_body = binance_rest.split(" -> ")[0], binance_rest.split(": ", 1)[1]
long_diff = binance_diff(107, 108, "[" + ",".join('["0.3%04d0000","1.00000000"]' % i for i in range(200)) + "]", "[]")
ws_seed("binance", 0, [ws_frame(m) for m in b_msgs[:2]]
        # a message in three fragments with a ping between them (answered, not a message)
        + [ws_frame(b_msgs[2][:20], fin=False), ws_frame(b"keepalive", opcode=9), ws_frame(b_msgs[2][20:40], opcode=0, fin=False),
           ws_frame(b_msgs[2][40:], opcode=0), ws_frame(b"", opcode=10)]
        + [ws_frame(m) for m in b_msgs[3:]] + [ws_frame(long_diff), ws_close(1000, b"bye")], b_url, b_body)
ws_seed("coinbase", 1, [ws_frame(json_of(l)) for l in coinbase_ws.split("\n")[:-1]] + [ws_close(1001)])
ws_seed("kraken", 2, [ws_frame(json_of(l)) for l in kraken_ws.split("\n")] + [ws_frame(json_of(kraken_ws.split("\n")[3]), opcode=2)])
ws_seed("bitstamp", 3, [ws_frame(json_of(l)) for l in bitstamp_ws.split("\n")] + [ws_close(4000, b"reconnect")],
        bitstamp_rest.split(" -> ")[0], bitstamp_rest.split(": ", 1)[1])
# Frames a client must refuse (each ends the connection; what follows is never a message).
ok = ws_frame(b_msgs[0])
for name, bad in [("masked", ws_frame(b_msgs[0], mask=b"\x01\x02\x03\x04")),
                  ("rsv_bits", ws_frame(b_msgs[0], rsv=4)),
                  ("reserved_opcode", ws_frame(b"x", opcode=3)),
                  ("fragmented_ping", ws_frame(b"p", opcode=9, fin=False)),
                  ("long_ping", ws_frame(b"p" * 126, opcode=9)),
                  ("orphan_continuation", ws_frame(b"x", opcode=0)),
                  ("text_inside_fragments", ws_frame(b"{", fin=False) + ws_frame(b"}")),
                  ("bad_utf8", ws_frame(b'{"s":"\xff\xfe"}')),
                  ("close_1005", ws_close(1005)),
                  ("close_one_byte", ws_frame(b"\x03", opcode=8)),
                  ("non_minimal_length", ws_frame(b"{}", length=2) + b"{}"),
                  ("huge_length", bytes([0x81, 127]) + struct.pack(">Q", 1 << 62) + b'{"e":'),
                  ("length_past_end", bytes([0x81, 126]) + struct.pack(">H", 60000) + b_msgs[0].encode())]:
    ws_seed("bad_" + name, 0, [ok, bad, ok])

# --- http_fuzz: max_header_bytes byte, max_body_bytes byte, piece byte, then a connection's bytes -


def http_seed(name, wire, head_b=0, body_b=0, piece_b=6):
    write("http_fuzz", name, bytes([head_b, body_b, piece_b]) + (wire.encode() if isinstance(wire, str) else wire))


http_seed("pipelined",
          "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
          "POST /api/silences HTTP/1.1\r\nHost: x\r\nContent-Length: 7\r\n\r\n{\"a\":1}"
          "POST /api/models HTTP/1.1\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\nX-A: 1\r\n\r\n"
          "4\r\n{\"b\"\r\n3;e=1\r\n:2}\r\n0\r\nT: y\r\n\r\n"
          "GET /api/alerts?symbol=GOOG&limit=5 HTTP/1.1\r\n\r\n")
http_seed("auth",
          "GET /api/alerts HTTP/1.1\r\nAuthorization: Bearer fz6token\r\n\r\n"
          "GET /api/alerts HTTP/1.1\r\nAuthorization: Bearer fz6tokem\r\n\r\n"
          "GET /symbol/AAPL?token=fz6token HTTP/1.1\r\n\r\n"
          "GET //evil.example?token=fz6token HTTP/1.1\r\n\r\n"
          "GET /\\evil.example?token=fz6token HTTP/1.1\r\n\r\n"
          "POST /api/silences HTTP/1.1\r\nCookie: a=b; ts_token=fz6token\r\nContent-Length: 2\r\n\r\n{}"
          "DELETE /api/silences/1 HTTP/1.1\r\nCookie: ts_token=fz6token\r\nX-Requested-With: ticksentry\r\n\r\n"
          "GET /metrics HTTP/1.1\r\nCookie: ts_token=\r\n\r\n")
http_seed("head_too_long", "GET / HTTP/1.1\r\nX-Pad: " + "a" * 1100 + "\r\n\r\n", 0, 0, 60)
http_seed("length_too_big", "POST / HTTP/1.1\r\nContent-Length: 1025\r\n\r\n" + "x" * 10)
http_seed("chunked_too_big", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n400\r\n" + "b" * 1024 + "\r\n1\r\nc\r\n0\r\n\r\n")
http_seed("smuggled", "POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
http_seed("bad_chunks", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXX0\r\n\r\n")
http_seed("lengths", "POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello"
          "POST / HTTP/1.1\r\ncontent-length:  0 \r\nExpect: 100-continue\r\n\r\n"
          "POST / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n")

print("seeds written under", HERE)
