"""The figures' style: fonts, sizes, markers and colours (read by `dpclust.pipeline.plotting` only).

Only render jobs depend on it: the code hash of an item's aggregate and checks steps leaves this
module out (workflow/rules/common.smk `item_code`), so a style edit re-renders the figures and
re-runs nothing else.
"""

#: matplotlib settings of every figure
RC_PARAMS = {
    "figure.dpi": 100,
    "savefig.dpi": 150,
    "font.size": 9,
    "axes.titlesize": 10,
    "legend.fontsize": 8,
    "svg.hashsalt": "dpclust",
}
#: markers cycled per method, so every figure draws a method the same way
MARKERS = ["o", "s", "^", "v", "D", "P", "X", "*", "<", ">", "h"]
#: a panel's size (inches) and the font size of a legend under the panels
PANEL_SIZE = (3.6, 2.8)
LEGEND_FONTSIZE = 7
