# Plot for docs/credit-flow-control.md; run from the repository root:
#   gnuplot docs/data/credit-buffer.gp
set terminal pngcairo size 1200,480 font ",10"
set output "docs/figures/credit-buffer.png"
set multiplot layout 1,2
set title "Buffer per VL for >= 98% of the consumer's rate, no drop"
set xlabel "round-trip time (symbol times = byte times)"
set ylabel "receive buffer (bytes)"
set logscale xy
set key top left
set grid
plot "docs/data/credit-buffer-vs-rtt.dat" using 1:($2 > 0 ? $2 : 1/0) with linespoints lw 2 pt 7 title "credit (measured)", \
     "" using 1:($3 > 0 ? $3 : 1/0) with linespoints lw 2 pt 5 title "ON/OFF 2/3-1/3 (measured)", \
     x with lines dt 2 lc rgb "gray40" title "1 x RTT", \
     1.5*x with lines dt 3 lc rgb "gray20" title "1.5 x RTT (paper's ON/OFF sizing)", \
     3*x with lines dt 4 lc rgb "gray60" title "3 x RTT", \
     131072 with lines lc rgb "red" dt 5 title "credit cap: 2048 blocks in flight"
unset logscale
set title "Efficiency against buffer, RTT 16000 symbol times"
set xlabel "receive buffer (x RTT)"
set ylabel "delivered / what the consumer could take"
set yrange [0:1.05]
set key bottom right
plot "docs/data/credit-efficiency-vs-buffer.dat" using 1:2 with linespoints lw 2 pt 7 title "credit", \
     "" using 1:4 with linespoints lw 2 pt 5 title "ON/OFF 2/3-1/3", \
     "" using 1:($5 > 0 ? 0.02 : 1/0) with points pt 2 lc rgb "red" title "ON/OFF run had drops"
unset multiplot
