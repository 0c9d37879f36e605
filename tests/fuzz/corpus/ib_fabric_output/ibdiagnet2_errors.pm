-------------------------------------------------------
Port=1 Lid=0x0010 GUID=0x0c42a10300a1b201 Device=4129 Port Name=gpu-node-017/U1/B12D0F0/0/0
-------------------------------------------------------
symbol_error_counter_extended=0x0000000000000000
link_error_recovery_counter_extended=0x0000000000000000
port_rcv_errors_extended=0x0000000000000000
port_xmit_discard_extended=0x0000000000000003
port_xmit_data_extended=0x00000002a3f0c410
-------------------------------------------------------
Port=17 Lid=0x0002 GUID=0xb8cef60300e4a010 Device=54002 Port Name=Sb8cef60300e4a010/Nb8cef60300e4a010/P17
-------------------------------------------------------
symbol_error_counter_extended=0x00000000000000c8
link_error_recovery_counter_extended=0x0000000000000002
local_link_integrity_errors_extended=NA
port_rcv_errors_extended=0x0000000000000000
port_local_physical_errors=0x0000000000000000
-------------------------------------------------------
Port=33 Lid=0x0003 GUID=0xb8cef60300e4a020 Device=54002 Port Name=Sb8cef60300e4a020/Nb8cef60300e4a020/P33
-------------------------------------------------------
symbol_error_counter_extended=0x0000000000000000
port_rcv_remote_physical_errors_extended=0x0000000000000011
port_rcv_errors_extended=0x0000000000000000
-------------------------------------------------------
Port=5 Lid=0x0004 GUID=0xb8cef60300e4a0ff Device=54002 Port Name=Sb8cef60300e4a0ff/Nb8cef60300e4a0ff/P5
-------------------------------------------------------
port_rcv_errors_extended=0x0000000000000001
-------------------------------------------------------
