# The RDMA experiments' figures from docs/results/rdma-*.csv (made by
# docs/results/rdma-experiments.sh): run from the repository's top folder.
set terminal pngcairo size 900,600 enhanced font 'Sans,11'
set datafile separator ','
set grid
set logscale x 2
set xlabel 'transfer size (bytes)'
set xtics ('256 B' 256, '1 KiB' 1024, '4 KiB' 4096, '16 KiB' 16384, '64 KiB' 65536, '256 KiB' 262144, '1 MiB' 1048576, '4 MiB' 4194304)

set output 'docs/figures/rdma-e1-e2.png'
set key right bottom
set ylabel 'share of capacity\_gbps'
set yrange [0:1.05]
set title 'E1, E2: RDMA write and read throughput against transfer size (1 hop, 32 outstanding)'
plot 'docs/results/rdma-e1-e2.csv' using (strcol(1) eq 'write' && $7 == 10 ? $2 : 1/0):10 with linespoints lw 2 title 'write, 10 Gbit/s', \
     '' using (strcol(1) eq 'read' && $7 == 10 ? $2 : 1/0):10 with linespoints lw 2 title 'read, 10 Gbit/s', \
     '' using (strcol(1) eq 'write' && $7 == 100 ? $2 : 1/0):10 with linespoints lw 2 title 'write, 100 Gbit/s', \
     '' using (strcol(1) eq 'read' && $7 == 100 ? $2 : 1/0):10 with linespoints lw 2 title 'read, 100 Gbit/s', \
     0.97 with lines dt 2 lc 'gray' title 'target 0.97 (from 16 KB)'

set output 'docs/figures/rdma-mappings.png'
set ylabel 'user Gbit/s at 100 Gbit/s'
set yrange [0:90]
set key right bottom
set title 'Writes over the three mappings onto Layer 2 (100 Gbit/s links)'
plot 'docs/results/rdma-mappings.csv' using (strcol(1) eq 'bundle' && $8 == 100 ? $3 : 1/0):9 with linespoints lw 2 title 'bundle (the spec''s)', \
     '' using (strcol(1) eq 'cell' && $8 == 100 ? $3 : 1/0):9 with linespoints lw 2 title 'cell', \
     '' using (strcol(1) eq 'compact' && $8 == 100 ? $3 : 1/0):9 with linespoints lw 2 title 'compact'
