set terminal pngcairo size 900,600 enhanced font 'Sans,11'
if (!exists("rifl_out")) rifl_out = 'docs/figures/fig5-bernoulli-per-dest.png'
set output rifl_out
set grid
set key left top
set xlabel 'load'
set ylabel 'bandwidth utilization'
set yrange [0:1.05]
set title 'Utilization against load, bernoulli arrivals, per-dest hosts'
plot 'docs/figures/fig5-bernoulli-per-dest.dat' index 0 using 1:2 with linespoints lw 2 title 'iSLIP, fixed 256 B', \
     'docs/figures/fig5-bernoulli-per-dest.dat' index 1 using 1:2 with linespoints lw 2 title 'iSLIP, variable', \
     'docs/figures/fig5-bernoulli-per-dest.dat' index 2 using 1:2 with linespoints lw 2 title 'SAFC, fixed 256 B', \
     'docs/figures/fig5-bernoulli-per-dest.dat' index 3 using 1:2 with linespoints lw 2 title 'SAFC, variable', \
     x with lines dt 2 lc rgb 'gray' title 'offered load'
unset output
