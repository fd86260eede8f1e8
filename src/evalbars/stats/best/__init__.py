"""The best model, honestly: the winner's score corrected for selection
(:mod:`evalbars.stats.best.winners`) and confidence sets for the best and the top k
(:mod:`evalbars.stats.best.sets`)."""
