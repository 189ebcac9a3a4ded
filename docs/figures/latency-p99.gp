set terminal pngcairo size 900,600 enhanced font 'Sans,11'
if (!exists("rifl_out")) rifl_out = 'docs/figures/latency-p99.png'
set output rifl_out
set grid
set key left top
set xlabel 'load'
set ylabel 'latency p99 (cell times)'
set logscale y
set title '99th percentile cell latency against load, per-dest hosts'
plot 'docs/figures/latency-p99.dat' index 0 using 1:2 with linespoints lw 2 title 'iSLIP, traffic=bernoulli', \
     'docs/figures/latency-p99.dat' index 1 using 1:2 with linespoints lw 2 title 'iSLIP, traffic=bursty', \
     'docs/figures/latency-p99.dat' index 2 using 1:2 with linespoints lw 2 title 'SAFC, traffic=bernoulli', \
     'docs/figures/latency-p99.dat' index 3 using 1:2 with linespoints lw 2 title 'SAFC, traffic=bursty'
unset output
